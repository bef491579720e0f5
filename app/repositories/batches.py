"""Batches: storing one, finding it (by id or Idempotency-Key), counting its progress with
GROUP BY queries, listing batches, and reading its results in submission order by pages.

A batch's items are the screenings that name it; nothing about progress is stored on the
batch row, so the counts can never disagree with the screenings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlalchemy import ColumnElement, Select, distinct, func, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.batch import Batch
from app.models.job import Job
from app.models.lean_check import LeanCheck
from app.models.review import Review
from app.models.screening import Screening
from app.policy.reasons import Reason
from app.repositories import keyset
from app.repositories.conflicts import insert_unless_exists
from app.vocabulary import LEAN_NOT_CHECKED, JobStatus, Outcome, ParseStatus, Role, ScreeningStatus

# Any constant both sides agree on; it only has to differ from other advisory lock users.
INGEST_LOCK_KEY = 0x46534254  # "FSBT"
# queued: no item has started; running: some have, not all are done; done: all are.
BatchStatus = Literal["queued", "running", "done"]


async def lock_ingest(session: AsyncSession) -> None:
    """Take the batch-ingest lock until the transaction ends (PostgreSQL; a no-op on SQLite,
    which has one writer at a time anyway).

    Two batches inserting overlapping pairs in different orders would otherwise wait on
    each other's uncommitted rows in the pairs' unique index: a deadlock, and a 503 for
    one client. A single submission inserts one pair and cannot close such a cycle.
    """
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(select(func.pg_advisory_xact_lock(INGEST_LOCK_KEY)))


async def add(
    session: AsyncSession,
    *,
    batch_id: str,
    name: str | None,
    total: int,
    idempotency_key: str | None,
    body_sha256: str,
    scope: str | None = None,
) -> bool:
    """Store the batch row; False (nothing stored) if a batch holds `idempotency_key` in
    `scope` (the API key's name, which a key needs; kept only with one).

    Race-safe: of two requests with one key, the second waits for the first to commit and
    then stores nothing.
    """
    if idempotency_key is not None and scope is None:
        raise ValueError("an Idempotency-Key is held in an API key's scope: name the scope")
    values = {
        "id": batch_id,
        "name": name,
        "total": total,
        "idempotency_scope": None if idempotency_key is None else scope,
        "idempotency_key": idempotency_key,
        "body_sha256": body_sha256,
    }
    held = ["idempotency_scope", "idempotency_key"]
    return await insert_unless_exists(session, Batch, values, held)


async def get(session: AsyncSession, batch_id: str) -> Batch | None:
    """The batch; None when there is none (and for an id holding a NUL, which no stored id
    holds and PostgreSQL would refuse to even compare with)."""
    if "\x00" in batch_id:
        return None
    return await session.get(Batch, batch_id, populate_existing=True)


async def ids_named(session: AsyncSession, name: str, limit: int) -> list[str]:
    """Up to `limit` ids of the batches called `name`, oldest first. Stored names are not
    unique (nothing ever required them to be), so a caller must handle several."""
    if "\x00" in name:
        return []
    statement = select(Batch.id).where(Batch.name == name).order_by(Batch.created_at, Batch.id)
    return list((await session.execute(statement.limit(limit))).scalars())


async def get_by_key(session: AsyncSession, scope: str, idempotency_key: str) -> Batch | None:
    statement = select(Batch).where(
        Batch.idempotency_scope == scope, Batch.idempotency_key == idempotency_key
    )
    return (await session.execute(statement)).scalar_one_or_none()


# ---- Progress -------------------------------------------------------------------------------


def batch_status(total: int, statuses: Mapping[str, int]) -> BatchStatus:
    """done: every item has its outcome; queued: none has started; running: in between."""
    done = statuses.get(ScreeningStatus.DONE, 0)
    if done >= total:
        return "done"
    if done == 0 and statuses.get(ScreeningStatus.RUNNING, 0) == 0:
        return "queued"
    return "running"


# Causes listed in a batch's progress; a typo in a base URL makes one, a flaky gateway
# a few; past this many the rest are too scattered to read as lines anyway.
MAX_FAILURE_CAUSES = 20


@dataclass(frozen=True, slots=True)
class Failure:
    """Items that ended on one cause: a role's provider error with its error text, or
    `job_failed` with the worker's."""

    reason: str
    error: str
    count: int


@dataclass(frozen=True, slots=True)
class Progress:
    total: int
    # Items per screening status and per outcome, every key present.
    statuses: dict[str, int]
    outcomes: dict[str, int]
    # Every stored review of the batch (all attempts), per role and parse status.
    parse_statuses: dict[str, dict[str, int]]
    # Items whose job failed too often and was given up.
    dead: int
    # Items that needed a provider call (queued, not supplied replies), and of those done,
    # the ones with a provider_error review (whatever the role).
    needed_provider: int = 0
    provider_failed: int = 0
    # The most common failure causes of done items, most frequent first.
    failures: list[Failure] = field(default_factory=list)
    # Items left out of outcomes, parse statuses and failures: blind to the caller.
    blind: int = 0

    @property
    def done(self) -> int:
        return self.statuses[ScreeningStatus.DONE]

    @property
    def status(self) -> BatchStatus:
        return batch_status(self.total, self.statuses)


async def progress(
    session: AsyncSession, batch: Batch, *, hidden: ColumnElement[bool] | None = None
) -> Progress:
    """A few GROUP BY / count queries; no item row is loaded. `hidden`: the screenings
    whose outcome the caller may not see (blind_items.is_blind_screening): counted among
    the statuses and as `blind`, left out of everything that would tell their outcome."""
    statuses = dict.fromkeys((s.value for s in ScreeningStatus), 0)
    outcomes = dict.fromkeys((o.value for o in Outcome), 0)
    shown = ~hidden if hidden is not None else true()
    by_state = (
        select(Screening.status, Screening.outcome, func.count())
        .where(Screening.batch_id == batch.id)
        .group_by(Screening.status, Screening.outcome)
    )
    for status, outcome, count in (await session.execute(by_state)).all():
        statuses[status] += count
        if outcome is not None:
            outcomes[outcome] += count
    blind = 0
    if hidden is not None:
        blind, outcomes = await _withheld(session, batch.id, hidden, outcomes)
    return Progress(
        total=batch.total,
        statuses=statuses,
        outcomes=outcomes,
        parse_statuses=await _parse_statuses(session, batch.id, shown),
        dead=await _dead_jobs(session, batch.id, shown),
        needed_provider=await _queued_items(session, batch.id),
        provider_failed=await _provider_failed(session, batch.id, shown),
        failures=await failures(session, batch.id, shown),
        blind=blind,
    )


async def _withheld(
    session: AsyncSession, batch_id: str, hidden: ColumnElement[bool], outcomes: dict[str, int]
) -> tuple[int, dict[str, int]]:
    """How many of the batch's items are `hidden`, and `outcomes` without theirs."""
    statement = (
        select(Screening.outcome, func.count())
        .where(Screening.batch_id == batch_id, hidden)
        .group_by(Screening.outcome)
    )
    rows = (await session.execute(statement)).all()
    for outcome, count in rows:
        if outcome is not None:
            outcomes = outcomes | {outcome: outcomes[outcome] - count}
    return sum(count for _, count in rows), outcomes


async def _parse_statuses(
    session: AsyncSession, batch_id: str, shown: ColumnElement[bool]
) -> dict[str, dict[str, int]]:
    counts = {role.value: dict.fromkeys((p.value for p in ParseStatus), 0) for role in Role}
    statement = (
        select(Review.role, Review.parse_status, func.count())
        .join(Screening, Screening.id == Review.screening_id)
        .where(Screening.batch_id == batch_id, shown)
        .group_by(Review.role, Review.parse_status)
    )
    for role, parse_status, count in (await session.execute(statement)).all():
        counts.setdefault(role, {})[parse_status] = count
    return counts


async def _dead_jobs(session: AsyncSession, batch_id: str, shown: ColumnElement[bool]) -> int:
    statement = (
        select(func.count())
        .select_from(Job)
        .join(Screening, Screening.id == Job.screening_id)
        .where(Screening.batch_id == batch_id, Job.status == JobStatus.DEAD, shown)
    )
    return int((await session.execute(statement)).scalar_one())


async def _queued_items(session: AsyncSession, batch_id: str) -> int:
    # Every item without supplied replies got a job, and jobs are kept once done.
    statement = (
        select(func.count())
        .select_from(Job)
        .join(Screening, Screening.id == Job.screening_id)
        .where(Screening.batch_id == batch_id)
    )
    return int((await session.execute(statement)).scalar_one())


def _done_provider_errors(batch_id: str, shown: ColumnElement[bool]) -> Select[Review]:
    """Provider-error reviews of the batch's done items (those `shown`)."""
    return (
        select(Review)
        .join(Screening, Screening.id == Review.screening_id)
        .where(
            Screening.batch_id == batch_id,
            Screening.status == ScreeningStatus.DONE,
            Review.parse_status == ParseStatus.PROVIDER_ERROR,
            shown,
        )
    )


async def _provider_failed(session: AsyncSession, batch_id: str, shown: ColumnElement[bool]) -> int:
    reviewed = _done_provider_errors(batch_id, shown).subquery()
    statement = select(func.count(distinct(reviewed.c.screening_id)))
    return int((await session.execute(statement)).scalar_one())


async def failures(
    session: AsyncSession, batch_id: str, shown: ColumnElement[bool] | None = None
) -> list[Failure]:
    """Done items per failure cause: `<role>_provider_error` and the call's error (an item
    counts once per role and error, so one with both roles failing counts under each),
    and `job_failed` with the screening's error; the MAX_FAILURE_CAUSES most common."""
    shown = shown if shown is not None else true()
    reviewed = _done_provider_errors(batch_id, shown).subquery()
    by_call = select(
        reviewed.c.role, reviewed.c.error, func.count(distinct(reviewed.c.screening_id))
    ).group_by(reviewed.c.role, reviewed.c.error)
    found = [
        Failure(f"{role}_provider_error", error or "", count)
        for role, error, count in (await session.execute(by_call)).all()
    ]
    given_up = (
        select(Screening.error, func.count())
        .where(Screening.batch_id == batch_id, Screening.error.is_not(None))
        .where(Screening.status == ScreeningStatus.DONE, shown)
        .group_by(Screening.error)
    )
    found += [
        Failure(Reason.JOB_FAILED.value, error or "", count)
        for error, count in (await session.execute(given_up)).all()
    ]
    found.sort(key=lambda f: (-f.count, f.reason, f.error))
    return found[:MAX_FAILURE_CAUSES]


async def status_counts(
    session: AsyncSession, batch_ids: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Items per screening status for each batch (one GROUP BY for a page of batches)."""
    counts: dict[str, dict[str, int]] = {batch_id: {} for batch_id in batch_ids}
    if not batch_ids:
        return counts
    statement = (
        select(Screening.batch_id, Screening.status, func.count())
        .where(Screening.batch_id.in_(batch_ids))
        .group_by(Screening.batch_id, Screening.status)
    )
    for batch_id, status, count in (await session.execute(statement)).all():
        counts[str(batch_id)][status] = count
    return counts


async def outcome_counts(
    session: AsyncSession, batch_ids: Sequence[str]
) -> dict[str, dict[str, int]]:
    """Done items per outcome for each batch, every outcome listed (one GROUP BY for a page
    of batches; the admin's batches page, which hides no item)."""
    counts = {batch_id: dict.fromkeys((o.value for o in Outcome), 0) for batch_id in batch_ids}
    if not batch_ids:
        return counts
    statement = (
        select(Screening.batch_id, Screening.outcome, func.count())
        .where(Screening.batch_id.in_(batch_ids), Screening.outcome.is_not(None))
        .group_by(Screening.batch_id, Screening.outcome)
    )
    for batch_id, outcome, count in (await session.execute(statement)).all():
        counts[str(batch_id)][str(outcome)] = count
    return counts


# ---- Listing and results --------------------------------------------------------------------


_NEWEST_FIRST = keyset.Order(Batch.created_at, Batch.id, newest_first=True, numbered=False)


async def list_page(
    session: AsyncSession, *, cursor: str | None, limit: int
) -> tuple[list[Batch], str | None]:
    """One page of batches, newest first, and the next page's cursor (None on the last).
    Raises InvalidCursor for a cursor this function did not make."""
    return await keyset.page(session, select(Batch), _NEWEST_FIRST, cursor=cursor, limit=limit)


@dataclass(frozen=True, slots=True)
class ItemResult:
    index: int
    id: str
    external_id: str | None
    status: str
    outcome: str | None
    reasons: list[str]
    # What the Lean server said (app/lean), `not_checked` when none was asked (yet).
    lean_status: str = LEAN_NOT_CHECKED


async def results_page(
    session: AsyncSession, batch_id: str, *, after: int, limit: int
) -> list[ItemResult]:
    """Up to `limit` items with an index above `after`, in index order (a keyset page on
    the unique (batch_id, batch_index) index: the cost of a page does not grow with
    its position)."""
    statement = (
        select(
            Screening.batch_index,
            Screening.id,
            Screening.external_id,
            Screening.status,
            Screening.outcome,
            Screening.reasons,
            LeanCheck.status,
        )
        # At most one check a screening (unique screening_id): the page keeps its rows.
        .outerjoin(LeanCheck, LeanCheck.screening_id == Screening.id)
        .where(Screening.batch_id == batch_id, Screening.batch_index > after)
        .order_by(Screening.batch_index)
        .limit(limit)
    )
    return [_item_result(row) for row in (await session.execute(statement)).all()]


def _item_result(row: Any) -> ItemResult:
    index, screening_id, external_id, status, outcome, reasons, lean = row
    lean_status = LEAN_NOT_CHECKED if lean is None else str(lean)
    return ItemResult(index, screening_id, external_id, status, outcome, list(reasons), lean_status)
