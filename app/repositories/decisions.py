"""Decisions: appended to an item's trail, read back in order, copied onto the screenings
the item answers for as their `final_decision`, and read for the export. There is no
update or delete path: the ORM model and database triggers refuse both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.api_key import AccessRole
from app.models.decision import Decision
from app.models.pair import PairRow
from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.screening import Screening
from app.vocabulary import DecisionKind, DecisionValue


async def add(
    session: AsyncSession,
    *,
    queue_item_id: int,
    screening_id: str,
    kind: DecisionKind,
    decision: DecisionValue | None,
    note: str,
    actor: str,
    actor_role: AccessRole,
    at: datetime,
    defects: Sequence[str] = (),
    blind: bool = False,
    claimed_at: datetime | None = None,
    opened_at: datetime | None = None,
    withdraws_id: int | None = None,
) -> Decision:
    row = Decision(
        queue_item_id=queue_item_id,
        screening_id=screening_id,
        kind=kind,
        decision=decision,
        note=note,
        defects=list(defects),
        blind=blind,
        claimed_at=claimed_at,
        opened_at=opened_at,
        withdraws_id=withdraws_id,
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
    await set_final_decisions(session, [screening_id], decision, at=at)


async def set_final_decisions(
    session: AsyncSession,
    screening_ids: Sequence[str],
    decision: str | None,
    *,
    at: datetime | None,
) -> None:
    """`set_final_decision` for every screening an item answers for."""
    statement = (
        update(Screening)
        .where(Screening.id.in_(screening_ids))
        .values(final_decision=decision, final_decision_at=at)
        .execution_options(synchronize_session=False)
    )
    await session.execute(statement)


# ---- Export ---------------------------------------------------------------------------------

# The rows the export holds: what a person decided, and an admin's adjudication.
EXPORTED_KINDS = (DecisionKind.DECISION, DecisionKind.ADJUDICATION)


@dataclass(frozen=True, slots=True)
class ExportRow:
    """One decision (kind `decision` or `adjudication`) and one screening it applies to,
    with what it was about."""

    decision: Decision
    item: QueueItem
    screening: Screening
    pair: PairRow
    # A later reopen or adjudication of the same item set this decision aside, or its
    # decider withdrew it.
    superseded: bool
    withdrawn: bool


async def export_page(session: AsyncSession, *, after: int, limit: int) -> list[ExportRow]:
    """Up to `limit` decisions with an id above `after`, in id order (a keyset page), each
    once for every screening its item answers for (the opening one first)."""
    ids = (
        select(Decision.id)
        .where(Decision.kind.in_(EXPORTED_KINDS), Decision.id > after)
        .order_by(Decision.id)
        .limit(limit)
    )
    page = list((await session.execute(ids)).scalars())
    if not page:
        return []
    statement = (
        select(Decision, QueueItem, Screening, PairRow, _set_aside(), _withdrawn())
        .join(QueueItem, QueueItem.id == Decision.queue_item_id)
        .join(QueueItemScreening, QueueItemScreening.queue_item_id == QueueItem.id)
        .join(Screening, Screening.id == QueueItemScreening.screening_id)
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(Decision.id.in_(page))
        .order_by(Decision.id, Screening.id != QueueItem.screening_id, QueueItemScreening.id)
    )
    return [_export_row(row) for row in (await session.execute(statement)).all()]


def _set_aside() -> Any:
    later = aliased(Decision)
    kinds = (DecisionKind.REOPEN, DecisionKind.ADJUDICATION)
    return exists(
        select(1).where(
            and_(
                later.queue_item_id == Decision.queue_item_id,
                later.kind.in_(kinds),
                later.id > Decision.id,
            )
        )
    ).label("set_aside")


def _withdrawn() -> Any:
    withdrawal = aliased(Decision)
    return exists(select(1).where(withdrawal.withdraws_id == Decision.id)).label("withdrawn")


def _export_row(row: Any) -> ExportRow:
    decision, item, screening, pair, set_aside, withdrawn = row
    return ExportRow(
        decision, item, screening, pair, bool(set_aside) or bool(withdrawn), bool(withdrawn)
    )
