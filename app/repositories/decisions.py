"""Decisions: appended to an item's trail, read back in order, copied onto the screening as
its `final_decision`, and read for the export. There is no update or delete path: the
ORM model and database triggers refuse both."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.decision import Decision, DecisionKind
from app.models.pair import PairRow
from app.models.queue_item import QueueItem
from app.models.screening import Screening


async def add(
    session: AsyncSession,
    *,
    queue_item_id: int,
    screening_id: str,
    kind: DecisionKind,
    decision: str | None,
    note: str,
    actor: str,
    actor_role: str,
    at: datetime,
) -> Decision:
    row = Decision(
        queue_item_id=queue_item_id,
        screening_id=screening_id,
        kind=kind.value,
        decision=decision,
        note=note,
        actor=actor,
        actor_role=actor_role,
        created_at=at,
    )
    session.add(row)
    await session.flush()
    return row


async def for_item(session: AsyncSession, queue_item_id: int) -> list[Decision]:
    """The item's trail, oldest first."""
    statement = (
        select(Decision).where(Decision.queue_item_id == queue_item_id).order_by(Decision.id)
    )
    return list((await session.execute(statement)).scalars())


async def set_final_decision(
    session: AsyncSession, screening_id: str, decision: str | None, *, at: datetime | None
) -> None:
    """The screening's `final_decision` (None after a reopen); its outcome is untouched."""
    statement = (
        update(Screening)
        .where(Screening.id == screening_id)
        .values(final_decision=decision, final_decision_at=at)
        .execution_options(synchronize_session=False)
    )
    await session.execute(statement)


# ---- Export ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One decision (kind `decision`) with what it was about."""

    decision: Decision
    item: QueueItem
    screening: Screening
    pair: PairRow
    # A later reopen of the same item set this decision aside.
    superseded: bool


async def export_page(session: AsyncSession, *, after: int, limit: int) -> list[ExportRow]:
    """Up to `limit` decisions with an id above `after`, in id order (a keyset page)."""
    later = aliased(Decision)
    reopened = exists(
        select(1).where(
            and_(
                later.queue_item_id == Decision.queue_item_id,
                later.kind == DecisionKind.REOPEN.value,
                later.id > Decision.id,
            )
        )
    )
    statement = (
        select(Decision, QueueItem, Screening, PairRow, reopened.label("superseded"))
        .join(QueueItem, QueueItem.id == Decision.queue_item_id)
        .join(Screening, Screening.id == Decision.screening_id)
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(Decision.kind == DecisionKind.DECISION.value, Decision.id > after)
        .order_by(Decision.id)
        .limit(limit)
    )
    return [_export_row(row) for row in (await session.execute(statement)).all()]


def _export_row(row: Any) -> ExportRow:
    decision, item, screening, pair, superseded = row
    return ExportRow(decision, item, screening, pair, bool(superseded))
