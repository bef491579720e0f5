"""Screenings: adding, reading, listing newest first, and recording the one outcome."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Select,
    Table,
    Update,
    bindparam,
    insert,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import joinedload, selectinload

from app.clock import utcnow
from app.models.pair import PairRow
from app.models.screening import Screening
from app.repositories import keyset
from app.vocabulary import ScreeningStatus

DONE = ScreeningStatus.DONE


async def add(
    session: AsyncSession,
    *,
    pair_id: int,
    external_id: str | None,
    batch_id: str | None,
    confirmations: int,
    label: str | None = None,
    tags: Sequence[str] = (),
    status: ScreeningStatus = ScreeningStatus.QUEUED,
    judges: Sequence[str] | None = None,
    panel_rule: str | None = None,
) -> Screening:
    """`judges` and `panel_rule`: the panel it is screened by (None: the single judge)."""
    screening = Screening(
        pair_id=pair_id,
        external_id=external_id,
        batch_id=batch_id,
        confirmations=confirmations,
        label=label,
        tags=list(tags),
        status=status,
        judges=None if judges is None else list(judges),
        panel_rule=panel_rule,
    )
    session.add(screening)
    await session.flush()
    return screening


async def get(session: AsyncSession, screening_id: str) -> Screening | None:
    """The screening with its pair and its reviews (ordered by role, attempt), fresh from
    the database even if this session already holds it."""
    statement = (
        select(Screening)
        .where(Screening.id == screening_id)
        .options(
            joinedload(Screening.pair),
            selectinload(Screening.reviews),
            selectinload(Screening.lean_check),
        )
        .execution_options(populate_existing=True)
    )
    return (await session.execute(statement)).scalar_one_or_none()


_NEWEST_FIRST = keyset.Order(Screening.created_at, Screening.id, newest_first=True, numbered=False)


async def list_page(
    session: AsyncSession,
    *,
    external_id: str | None = None,
    outcome: str | None = None,
    status: str | None = None,
    batch_id: str | None = None,
    outcome_hidden: ColumnElement[bool] | None = None,
    cursor: str | None = None,
    limit: int,
) -> tuple[list[Screening], str | None]:
    """One page, newest first (pair loaded, reviews not), and the cursor of the next page
    (None on the last). `outcome_hidden`: the screenings whose outcome the caller may not
    see, which an `outcome` filter never matches. Raises InvalidCursor for a cursor this
    function did not make."""
    filters = {"external_id": external_id, "outcome": outcome, "status": status}
    statement = _filtered(filters | {"batch_id": batch_id})
    if outcome is not None and outcome_hidden is not None:
        statement = statement.where(~outcome_hidden)
    return await keyset.page(session, statement, _NEWEST_FIRST, cursor=cursor, limit=limit)


def _filtered(filters: Mapping[str, str | None]) -> Select[Screening]:
    statement = select(Screening).options(joinedload(Screening.pair))
    for column, value in filters.items():
        if value is not None:
            statement = statement.where(getattr(Screening, column) == value)
    return statement


async def record_outcome(
    session: AsyncSession,
    screening_id: str,
    *,
    outcome: str,
    reasons: Sequence[str],
    evidence: Sequence[Mapping[str, object]],
    policy_version: str | None,
    evidence_version: str | None,
    error: str | None = None,
) -> bool:
    """Finish the screening with `outcome` unless it is already done; True if this call did.

    One conditional UPDATE, so of two racing writers exactly one records an outcome.
    """
    statement = (
        update(Screening)
        .where(Screening.id == screening_id, Screening.status != DONE)
        .values(
            status=DONE,
            outcome=str(outcome),
            reasons=[str(reason) for reason in reasons],
            evidence=[dict(finding) for finding in evidence],
            policy_version=policy_version,
            evidence_version=evidence_version,
            error=error,
            finished_at=utcnow(),
        )
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


# ---- Bulk, for batches ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NewScreening:
    """One row for `add_many`. With an `outcome` it is stored already done: supplied
    replies are decided at intake, in the same transaction."""

    id: str
    pair_id: int
    external_id: str | None
    batch_id: str | None
    batch_index: int | None
    confirmations: int
    outcome: str | None = None
    reasons: Sequence[str] = ()
    evidence: Sequence[Mapping[str, object]] = ()
    policy_version: str | None = None
    evidence_version: str | None = None
    label: str | None = None
    tags: Sequence[str] = ()
    # The panel it is screened by; None for the single judge.
    judges: Sequence[str] | None = None
    panel_rule: str | None = None
    priority: str = "interactive"

    def row(self, now: datetime) -> dict[str, Any]:
        decided = self.outcome is not None
        return {
            "id": self.id,
            "pair_id": self.pair_id,
            "external_id": self.external_id,
            "batch_id": self.batch_id,
            "batch_index": self.batch_index,
            "status": DONE if decided else ScreeningStatus.QUEUED,
            "outcome": self.outcome,
            "reasons": [str(reason) for reason in self.reasons],
            "evidence": [dict(finding) for finding in self.evidence],
            "policy_version": self.policy_version,
            "evidence_version": self.evidence_version,
            "confirmations": self.confirmations,
            "label": self.label,
            "tags": list(self.tags),
            "judges": None if self.judges is None else list(self.judges),
            "panel_rule": self.panel_rule,
            "priority": self.priority,
            "error": None,
            "created_at": now,
            "updated_at": now,
            "finished_at": now if decided else None,
        }


async def add_many(session: AsyncSession, new: Sequence[NewScreening]) -> None:
    """Insert every row with one executemany (no ORM objects are built)."""
    if not new:
        return
    now = utcnow()
    table = cast(Table, Screening.__table__)
    await session.execute(insert(table), [screening.row(now) for screening in new])


@dataclass(frozen=True, slots=True)
class ToRun:
    """What a worker needs of a claimed screening to run it."""

    id: str
    status: str
    confirmations: int
    informal: str
    formal: str
    header: str
    judges: list[str] | None = None
    panel_rule: str | None = None


async def to_run(session: AsyncSession, screening_ids: Sequence[str]) -> list[ToRun]:
    """Claimed screenings with their pairs, in one query (absent ids are left out)."""
    if not screening_ids:
        return []
    statement = (
        select(
            Screening.id,
            Screening.status,
            Screening.confirmations,
            PairRow.informal,
            PairRow.formal,
            PairRow.header,
            Screening.judges,
            Screening.panel_rule,
        )
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(Screening.id.in_(screening_ids))
    )
    return [ToRun(*row) for row in (await session.execute(statement)).all()]


async def mark_running_many(session: AsyncSession, screening_ids: Sequence[str]) -> None:
    """queued (or running, on a re-run) -> running, in one statement; done stays done."""
    if screening_ids:
        statement = (
            update(Screening)
            .where(Screening.id.in_(screening_ids), Screening.status != DONE)
            .values(status=ScreeningStatus.RUNNING)
            .execution_options(synchronize_session=False)
        )
        await session.execute(statement)


@dataclass(frozen=True, slots=True, kw_only=True)
class NewOutcome:
    """One screening's outcome for `record_outcomes`."""

    screening_id: str
    outcome: str
    reasons: Sequence[str]
    evidence: Sequence[Mapping[str, object]]
    policy_version: str | None
    evidence_version: str | None

    def params(self, now: datetime) -> dict[str, Any]:
        return {
            "b_id": self.screening_id,
            "b_outcome": str(self.outcome),
            "b_reasons": [str(reason) for reason in self.reasons],
            "b_evidence": [dict(finding) for finding in self.evidence],
            "b_policy_version": self.policy_version,
            "b_evidence_version": self.evidence_version,
            "b_now": now,
        }


def _record_outcome_by_id() -> Update:
    table = cast(Table, Screening.__table__)
    return (
        update(table)
        .where(table.c.id == bindparam("b_id"), table.c.status != DONE)
        .values(
            status=DONE,
            outcome=bindparam("b_outcome"),
            reasons=bindparam("b_reasons"),
            evidence=bindparam("b_evidence"),
            policy_version=bindparam("b_policy_version"),
            evidence_version=bindparam("b_evidence_version"),
            error=None,
            finished_at=bindparam("b_now"),
            updated_at=bindparam("b_now"),
        )
    )


# Built once: statement construction cost more than its execution (profile of the worker).
_RECORD_OUTCOME_BY_ID = _record_outcome_by_id()


async def record_outcomes(
    session: AsyncSession, outcomes: Sequence[NewOutcome]
) -> dict[str, str | None]:
    """`record_outcome` for many screenings in two statements; returns, for each screening
    this call finished, its batch id (None outside a batch). Those done already are left
    as they are.

    The SELECT locks the rows it returns (PostgreSQL; SQLite has one writer at a time), so
    nobody can finish them between it and the UPDATE: exactly one outcome, as with
    `record_outcome`.
    """
    if not outcomes:
        return {}
    ids = [outcome.screening_id for outcome in outcomes]
    statement = (
        select(Screening.id, Screening.batch_id)
        .where(Screening.id.in_(ids), Screening.status != DONE)
        .order_by(Screening.id)
        .with_for_update()
    )
    unfinished = {id_: batch_id for id_, batch_id in await session.execute(statement)}
    now = utcnow()
    params = [o.params(now) for o in outcomes if o.screening_id in unfinished]
    if params:
        await session.execute(_RECORD_OUTCOME_BY_ID, params)
    return unfinished
