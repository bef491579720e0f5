"""Rows for what people's decisions measure (app/reports/reviewers.py, review_stats.py): the
reported screenings with the queue item that answers for them, and decision trails.

Read whole, not streamed: they grow with the decisions people made (the queue's size),
not with the calls of a screening run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.decision import Decision
from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.screening import Screening
from app.repositories.report_rows import DecidedScreening, DecisionFact
from app.repositories.reports import ReportFilters, as_utc
from app.vocabulary import QueueStatus


def _item_of_screening() -> Any:
    """The item a screening answers for: the one it joined, else the one it opened."""
    return func.coalesce(QueueItemScreening.queue_item_id, QueueItem.id)


def _decided(filters: ReportFilters) -> Select[Any]:
    item_id = _item_of_screening()
    return (
        select(
            Screening.id, Screening.pair_id, Screening.outcome, Screening.final_decision, item_id
        )
        .outerjoin(QueueItemScreening, QueueItemScreening.screening_id == Screening.id)
        .outerjoin(QueueItem, QueueItem.screening_id == Screening.id)
        .where(*filters.reported_screenings(), item_id.is_not(None))
    )


async def decided_screenings(
    session: AsyncSession, filters: ReportFilters
) -> list[DecidedScreening]:
    """The reported screenings that have a queue item (decided or not)."""
    rows = (await session.execute(_decided(filters))).all()
    return [DecidedScreening(r[0], r[1], r[2], r[3], r[4]) for r in rows]


def _facts() -> Select[*tuple[Any, ...]]:
    return select(
        Decision.id,
        Decision.queue_item_id,
        Decision.kind,
        Decision.decision,
        Decision.actor,
        Decision.created_at,
        Decision.claimed_at,
        Decision.withdraws_id,
        Decision.defects,
        QueueItem.double_review,
        Decision.opened_at,
    ).join(QueueItem, QueueItem.id == Decision.queue_item_id)


def _fact(row: Any) -> DecisionFact:
    (row_id, item_id, kind, decision, actor, created_at, claimed_at, withdraws_id, defects,
     double_review, opened_at) = row  # fmt: skip
    return DecisionFact(
        row_id,
        item_id,
        kind,
        decision,
        actor,
        created_at,
        claimed_at=claimed_at,
        withdraws_id=withdraws_id,
        defects=tuple(str(d) for d in defects or ()),
        double_review=bool(double_review),
        opened_at=opened_at,
    )


async def report_facts(session: AsyncSession, filters: ReportFilters) -> list[DecisionFact]:
    """Every trail row of the items the reported screenings answer for, by id."""
    items = _decided(filters).with_only_columns(_item_of_screening().label("item_id"))
    statement = _facts().where(Decision.queue_item_id.in_(items)).order_by(Decision.id)
    return [_fact(row) for row in (await session.execute(statement)).all()]


async def facts_between(
    session: AsyncSession,
    *,
    since: datetime | None,
    until: datetime | None,
    include_awaiting_second: bool = False,
) -> list[DecisionFact]:
    """Every trail row made in [since, until) (either end open when None), by id, but none
    of an item awaiting its second decision unless `include_awaiting_second` (for admins:
    nobody else may learn the first decision, not even from a person's counts)."""
    statement = _facts().order_by(Decision.id)
    if not include_awaiting_second:
        statement = statement.where(QueueItem.status != QueueStatus.AWAITING_SECOND)
    if since is not None:
        statement = statement.where(Decision.created_at >= as_utc(since))
    if until is not None:
        statement = statement.where(Decision.created_at < as_utc(until))
    return [_fact(row) for row in (await session.execute(statement)).all()]
