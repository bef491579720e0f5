"""Which screenings answer for a queue item that is blind (app/review_queue/visibility.py):
the reads that withhold a blind item's outcome from a reviewer ask here.

A screening answers for the item it opened and for the item it joined (one pair, one
question: `queue_item_screenings`). An item is blind while unresolved with its `audit` one
of `audits`, which the caller takes from visibility.blind_audit_values(mode): this module
only spells the rule out in SQL (and so needs nothing from the package above it).

A blind item withholds every screening of its pair (the same informal, formal and header:
the pair row shared by content hash), not only those it answers for: a reviewer who
submits the pair again, or finds an older screening of it, must not read there what the
item hides. Every read that withholds goes through `_blind_screening_ids`, so this is the
one place that says it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import ColumnElement, CompoundSelect, and_, false, or_, select, union
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.screening import Screening
from app.vocabulary import QueueStatus


def is_blind_item(audits: Collection[bool]) -> ColumnElement[bool] | None:
    """A condition on `QueueItem`: unresolved, its `audit` one of `audits` (None: no item
    is blind)."""
    if not audits:
        return None
    return and_(QueueItem.status != QueueStatus.RESOLVED, QueueItem.audit.in_(audits))


def in_blind_pair(audits: Collection[bool]) -> ColumnElement[bool] | None:
    """A condition on `QueueItem`: it is blind (`is_blind_item`), or its pair's unresolved
    item is -- an older, resolved item of the pair must not show what that one hides."""
    blind = is_blind_item(audits)
    if blind is None:
        return None
    other = aliased(QueueItem)
    # No NULL on either side: the condition is negated, and NOT (NULL) would drop the row.
    blind_pairs = select(other.open_pair_id).where(
        other.open_pair_id.is_not(None),
        other.status != QueueStatus.RESOLVED,
        other.audit.in_(audits),
    )
    paired = and_(QueueItem.pair_id.is_not(None), QueueItem.pair_id.in_(blind_pairs))
    return or_(blind, paired)


async def pair_audits(session: AsyncSession, items: Sequence[QueueItem]) -> dict[int, bool | None]:
    """Per item id: the `audit` flag of another, unresolved item of its pair (an older item
    of a pair queued again since), None without one. A pair has at most one unresolved
    item: `open_pair_id` is unique, and NULL once resolved."""
    pair_ids = {item.pair_id for item in items if item.pair_id is not None}
    statement = select(QueueItem.open_pair_id, QueueItem.id, QueueItem.audit).where(
        QueueItem.open_pair_id.in_(pair_ids)
    )
    rows = (await session.execute(statement)).all() if pair_ids else []
    found = {pair_id: (item_id, audit) for pair_id, item_id, audit in rows}
    return {item.id: _other_audit(item, found.get(item.pair_id)) for item in items}


def _other_audit(item: QueueItem, open_item: tuple[int, bool] | None) -> bool | None:
    return open_item[1] if open_item is not None and open_item[0] != item.id else None


def _blind_screening_ids(audits: Collection[bool]) -> CompoundSelect[tuple[str]] | None:
    blind = is_blind_item(audits)
    if blind is None:
        return None
    joined = (
        select(QueueItemScreening.screening_id.label("screening_id"))
        .join(QueueItem, QueueItem.id == QueueItemScreening.queue_item_id)
        .where(blind)
    )
    # Items queued before queue_item_screenings existed are backfilled, but the opening
    # screening is read from the item too: a missing row must not unblind it.
    opened = select(QueueItem.screening_id.label("screening_id")).where(blind)
    # Any other screening of the pair: a resubmission must not tell what the item hides.
    same_pair = (
        select(Screening.id.label("screening_id"))
        .join(QueueItem, QueueItem.pair_id == Screening.pair_id)
        .where(blind)
    )
    return union(joined, opened, same_pair)


def is_blind_screening(audits: Collection[bool]) -> ColumnElement[bool]:
    """A condition on `Screening`: it answers for a blind item, or its pair has one (see
    `is_blind_item`)."""
    ids = _blind_screening_ids(audits)
    return false() if ids is None else Screening.id.in_(ids)


async def blind_among(
    session: AsyncSession, screening_ids: Collection[str], audits: Collection[bool]
) -> set[str]:
    """Those of `screening_ids` that answer for a blind item or whose pair has one (see
    `is_blind_item`)."""
    ids = _blind_screening_ids(audits)
    if ids is None or not screening_ids:
        return set()
    found = ids.subquery()
    statement = select(found.c.screening_id).where(found.c.screening_id.in_(screening_ids))
    return set((await session.execute(statement)).scalars())


async def batch_has_blind(
    session: AsyncSession, batch_ids: Collection[str], audits: Collection[bool]
) -> bool:
    """Whether a screening of one of the batches answers for a blind item."""
    # No stored id holds a NUL, and PostgreSQL would refuse to even compare with one.
    named = [batch_id for batch_id in batch_ids if "\x00" not in batch_id]
    if not audits or not named:
        return False
    statement = select(Screening.id).where(
        Screening.batch_id.in_(named), is_blind_screening(audits)
    )
    return (await session.execute(statement.limit(1))).first() is not None
