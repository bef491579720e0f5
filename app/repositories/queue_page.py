"""What the reviewers' queue page reads beside the listing itself: the queue's totals by
status, the names of the listed items' batches, the external ids of every screening an
item answers for, and a short preview of each pair's informal statement (cut in SQL, so
a page of long statements stays small)."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.batch import Batch
from app.models.pair import PairRow
from app.models.queue_item import QueueItem
from app.models.screening import Screening
from app.vocabulary import QueueStatus

PREVIEW_CHARS = 300


async def status_totals(session: AsyncSession, *, now: datetime) -> dict[QueueStatus, int]:
    """How many items the queue has in each status as of `now` (every status present, a
    lapsed claim counted as open, as the listing counts it)."""
    by_status = select(QueueItem.status, func.count()).group_by(QueueItem.status)
    totals = dict.fromkeys(QueueStatus, 0)
    for status, count in await session.execute(by_status):
        totals[status] += count
    lapsed = select(func.count()).where(
        QueueItem.status == QueueStatus.CLAIMED, QueueItem.claim_expires_at <= now
    )
    moved = (await session.execute(lapsed)).scalar_one()
    totals[QueueStatus.CLAIMED] -= moved
    totals[QueueStatus.OPEN] += moved
    return totals


async def batch_names(session: AsyncSession, batch_ids: Collection[str]) -> dict[str, str]:
    """The name of each of these batches that has one."""
    if not batch_ids:
        return {}
    statement = select(Batch.id, Batch.name).where(
        Batch.id.in_(sorted(batch_ids)), Batch.name.is_not(None)
    )
    return {batch_id: name for batch_id, name in await session.execute(statement) if name}


async def informal_previews(
    session: AsyncSession, screening_ids: Collection[str]
) -> dict[str, str]:
    """The first PREVIEW_CHARS characters of each screening's informal statement."""
    if not screening_ids:
        return {}
    statement = (
        select(Screening.id, func.substr(PairRow.informal, 1, PREVIEW_CHARS))
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(Screening.id.in_(sorted(screening_ids)))
    )
    return {screening_id: text for screening_id, text in await session.execute(statement)}


async def external_ids(session: AsyncSession, screening_ids: Collection[str]) -> dict[str, str]:
    """The external id of each of these screenings that has one: an item answers for
    every screening of its pair, and the page names them all."""
    if not screening_ids:
        return {}
    statement = select(Screening.id, Screening.external_id).where(
        Screening.id.in_(sorted(screening_ids)), Screening.external_id.is_not(None)
    )
    return {screening_id: ext for screening_id, ext in await session.execute(statement) if ext}
