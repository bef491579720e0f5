"""Why a screening run stopped, for the causes the worker handles apart from a failure.

The pipeline runs both roles in a TaskGroup, so what it raises may come wrapped in an
exception group: a cause counts when every exception in the group is of that kind.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from app.llm.errors import ProviderBackoff
from app.pipeline.screening import JobLost


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside `error`, exception groups flattened."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def _is_outage(error: BaseException) -> bool:
    if isinstance(error, PoolTimeout):
        return True
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated:
        return True
    return isinstance(error, OperationalError | InterfaceError) and not _is_sqlite_statement_error(
        error.orig
    )


def _is_sqlite_statement_error(error: BaseException | None) -> bool:
    # SQLite reports a statement it cannot run (no such table or column: a schema behind
    # the code) as an OperationalError too, but with the generic code. Waiting would not
    # help; busy, locked, I/O and can't-open errors have codes of their own.
    code = getattr(error, "sqlite_errorcode", None)
    return isinstance(error, sqlite3.Error) and code == sqlite3.SQLITE_ERROR


def is_database_outage(error: BaseException) -> bool:
    """The database did not answer (down, restarting, unreachable, locked, pool exhausted):
    not the job's fault, so not a failed attempt."""
    return all(_is_outage(leaf) for leaf in leaves(error))


def provider_backoff(error: BaseException) -> ProviderBackoff | None:
    """The provider's longest request to wait, when waiting is all that stopped the run."""
    found = leaves(error)
    backoffs = [leaf for leaf in found if isinstance(leaf, ProviderBackoff)]
    if backoffs and len(backoffs) == len(found):
        return max(backoffs, key=lambda backoff: backoff.retry_after)
    return None


def is_job_lost(error: BaseException) -> bool:
    return all(isinstance(leaf, JobLost) for leaf in leaves(error))
