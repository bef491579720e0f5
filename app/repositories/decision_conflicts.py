"""Contradictory final decisions on one pair across time: the screenings of a pair hold
both `faithful` and `mismatch` as their final decision (each was decided on its own queue
item, a new item being opened once the earlier one was resolved). People disagreeing with
themselves over time is what these listings show; reports count them.

(Not repositories/conflicts.py, which is INSERT ... ON CONFLICT.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.decision import Decision
from app.models.pair import PairRow
from app.models.queue_item import QueueItem
from app.models.screening import Screening
from app.repositories import keyset, queue_items
from app.vocabulary import DecisionValue, QueueStatus


@dataclass(frozen=True, slots=True)
class DecidedItem:
    """A resolved item of the pair: its final decision, who made it and when."""

    queue_item_id: int
    decision: DecisionValue
    decided_by: str
    decided_at: datetime
    screening_ids: list[str]


@dataclass(frozen=True, slots=True)
class PairConflict:
    pair: PairRow
    items: list[DecidedItem]


def _conflicting_pairs() -> Select[int]:
    return (
        select(Screening.pair_id)
        .where(Screening.final_decision.is_not(None))
        .group_by(Screening.pair_id)
        .having(func.count(func.distinct(Screening.final_decision)) > 1)
    )


async def count(session: AsyncSession) -> int:
    """How many pairs hold contradictory final decisions."""
    statement = select(func.count()).select_from(_conflicting_pairs().subquery())
    return int((await session.execute(statement)).scalar_one())


_OLDEST_FIRST = keyset.Order(PairRow.created_at, PairRow.id, newest_first=False, numbered=True)


async def page(
    session: AsyncSession, *, cursor: str | None, limit: int
) -> tuple[list[PairConflict], str | None]:
    """One page of conflicting pairs, oldest pair first, and the next page's cursor (None
    on the last). Raises InvalidCursor for a cursor this function did not make."""
    statement = select(PairRow).where(PairRow.id.in_(_conflicting_pairs()))
    shown, next_cursor = await keyset.page(
        session, statement, _OLDEST_FIRST, cursor=cursor, limit=limit
    )
    items = await _decided_items(session, [pair.id for pair in shown])
    return [PairConflict(pair, items.get(pair.id, [])) for pair in shown], next_cursor


async def _decided_items(
    session: AsyncSession, pair_ids: list[int]
) -> dict[int, list[DecidedItem]]:
    """The resolved items of each pair, oldest decision first. A resolved item's latest
    trail row is what resolved it (a decision or an adjudication)."""
    if not pair_ids:
        return {}
    last_rows = (
        select(func.max(Decision.id))
        .join(QueueItem, QueueItem.id == Decision.queue_item_id)
        .where(QueueItem.pair_id.in_(pair_ids), QueueItem.status == QueueStatus.RESOLVED)
        .group_by(Decision.queue_item_id)
        .scalar_subquery()
    )
    statement = (
        select(QueueItem.pair_id, Decision)
        .join(QueueItem, QueueItem.id == Decision.queue_item_id)
        .where(Decision.id.in_(last_rows))
        .order_by(Decision.created_at, Decision.id)
    )
    rows = list(await session.execute(statement))
    screenings = await queue_items.screening_ids(session, [row.queue_item_id for _, row in rows])
    found: dict[int, list[DecidedItem]] = {}
    for pair_id, row in rows:
        if pair_id is None or row.decision is None:  # a resolved item ends in a decision
            continue
        found.setdefault(pair_id, []).append(
            DecidedItem(
                row.queue_item_id,
                row.decision,
                row.actor,
                row.created_at,
                screenings[row.queue_item_id],
            )
        )
    return found
