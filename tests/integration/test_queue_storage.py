"""The queue's storage rules, below the service: decisions are append-only (ORM and raw
SQL alike), a decision row carries a value and a reopen none, and a screening is queued
at most once."""

from __future__ import annotations

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models import Decision, DecisionIsAppendOnly, QueueItem
from app.repositories import decisions, pairs, screenings
from app.review_queue.enqueue import queue_for_review
from app.vocabulary import DecisionKind, Pair


async def queued_screening(session: AsyncSession) -> tuple[str, int]:
    stored = await pairs.get_or_create(session, Pair("informal", "theorem t : 0 = 0"))
    screening = await screenings.add(
        session, pair_id=stored.id, external_id=None, batch_id=None, confirmations=0
    )
    added = await queue_for_review(
        session, screening.id, "needs_review", ["judge_missing"], audit_rate=0.0
    )
    assert added
    item = (await session.execute(select(QueueItem))).scalar_one()
    return screening.id, item.id


async def add_decision(session: AsyncSession, kind: DecisionKind, value: str | None) -> Decision:
    screening_id, item_id = await queued_screening(session)
    return await decisions.add(
        session,
        queue_item_id=item_id,
        screening_id=screening_id,
        kind=kind,
        decision=value,
        note="why",
        actor="alice",
        actor_role="reviewer",
        at=utcnow(),
    )


async def test_a_screening_is_queued_once(session: AsyncSession) -> None:
    screening_id, _ = await queued_screening(session)
    again = await queue_for_review(session, screening_id, "needs_review", [], audit_rate=0.0)
    assert again is False
    assert len((await session.execute(select(QueueItem))).scalars().all()) == 1


async def test_the_orm_refuses_to_change_or_delete_a_decision(session: AsyncSession) -> None:
    row = await add_decision(session, DecisionKind.DECISION, "faithful")
    row.note = "rewritten"
    with pytest.raises(DecisionIsAppendOnly):
        await session.flush()
    await session.rollback()
    row = await add_decision(session, DecisionKind.DECISION, "faithful")
    await session.delete(row)
    with pytest.raises(DecisionIsAppendOnly):
        await session.flush()


@pytest.mark.parametrize(
    "statement",
    ["UPDATE decisions SET decision = 'mismatch'", "DELETE FROM decisions"],
)
async def test_the_database_refuses_to_change_or_delete_a_decision(
    session: AsyncSession, statement: str
) -> None:
    await add_decision(session, DecisionKind.DECISION, "faithful")
    await session.commit()
    with pytest.raises(DBAPIError, match="append-only"):
        await session.execute(text(statement))


@pytest.mark.parametrize(
    ("kind", "value"), [(DecisionKind.DECISION, None), (DecisionKind.REOPEN, "faithful")]
)
async def test_a_decision_has_a_value_and_a_reopen_none(
    session: AsyncSession, kind: DecisionKind, value: str | None
) -> None:
    with pytest.raises(DBAPIError):
        await add_decision(session, kind, value)
