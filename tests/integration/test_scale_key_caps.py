"""The per-key caps' check at scale (app/intake/admission.py, app/repositories/jobs.py), on
SQLite and PostgreSQL: a key within its caps is answered from the span of its turns, with
no count of its outstanding jobs; a count runs only where the span passes a cap, and stops
at the cap plus the request's jobs plus one. The caps stay exact (tests/integration/
test_intake_priorities.py checks the 429s through the API). The statements run are
captured; nothing here is timed (bench/key_cap_bench.py measures the cost)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event, update
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.auth.principal import Principal
from app.errors import AppError
from app.intake import admission
from app.models.api_key import AccessRole
from app.models.job import Job
from app.repositories import jobs, pairs, screenings
from app.settings import Settings
from app.vocabulary import JobStatus, Pair, Priority

Sessions = async_sessionmaker[AsyncSession]
KEY = Principal("pipeline", AccessRole.SUBMITTER)


async def queue(sessions: Sessions, count: int, priority: Priority) -> list[str]:
    """`count` screenings of KEY, queued as intake queues a chunk (one enqueue_many)."""
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", "formal"))
        ids = []
        for _ in range(count):
            screening = await screenings.add(
                session, pair_id=pair.id, external_id=None, batch_id=None, confirmations=0
            )
            ids.append(screening.id)
        await jobs.enqueue_many(session, ids, priority=priority, submitter=KEY.name)
        await session.commit()
    return ids


async def finish(sessions: Sessions, screening_ids: list[str]) -> None:
    async with sessions() as session:
        done = update(Job).where(Job.screening_id.in_(screening_ids))
        await session.execute(done.values(status=JobStatus.DONE))
        await session.commit()


def caps(total: int, interactive: int) -> Settings:
    return Settings.model_construct(
        key_max_outstanding=total, key_max_outstanding_interactive=interactive
    )


@contextmanager
def statements(engine: AsyncEngine) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        seen.append(" ".join(statement.lower().split()))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


def counts(seen: list[str]) -> list[str]:
    return [statement for statement in seen if "count(" in statement]


async def test_a_key_within_its_caps_is_not_counted(
    engine: AsyncEngine, session_factory: Sessions
) -> None:
    await queue(session_factory, 40, Priority.BATCH)
    await queue(session_factory, 3, Priority.INTERACTIVE)
    async with session_factory() as session:
        with statements(engine) as seen:
            await admission.check_caps(session, KEY, caps(43, 3), queued=3)
    # Two ends of the key's turns per priority, and no count of its 43 jobs.
    assert seen and counts(seen) == []
    assert all("min(" in statement and "max(" in statement for statement in seen)


async def test_the_span_of_turns_bounds_the_live_jobs(session_factory: Sessions) -> None:
    batch = await queue(session_factory, 10, Priority.BATCH)
    await queue(session_factory, 2, Priority.INTERACTIVE)
    await finish(session_factory, batch[2:8])  # done in the middle: a gap in the turns
    async with session_factory() as session:
        assert await jobs.outstanding_at_most(session, KEY.name, Priority.INTERACTIVE) == 2
        assert await jobs.outstanding_at_most(session, KEY.name, Priority.BATCH) == 10
        assert await jobs.outstanding_at_most(session, KEY.name) == 12
        assert await jobs.outstanding_at_most(session, "nobody") == 0
        # The count itself stops at its limit, and counts the priority asked for.
        assert await jobs.outstanding_up_to(session, KEY.name, 100) == 6
        assert await jobs.outstanding_up_to(session, KEY.name, 5) == 5
        assert await jobs.outstanding_up_to(session, KEY.name, 100, Priority.INTERACTIVE) == 2


async def test_past_the_span_a_bounded_count_decides(
    engine: AsyncEngine, session_factory: Sessions
) -> None:
    batch = await queue(session_factory, 10, Priority.BATCH)
    await finish(session_factory, batch[2:8])  # 4 live, over a span of 10
    async with session_factory() as session:
        with statements(engine) as seen:
            await admission.check_caps(session, KEY, caps(5, 0), queued=1)  # 4 <= 5: passes
        [count] = counts(seen)
        assert "limit" in count  # stopped at 5 + 1 + 1
        # A cap lowered below what the key holds: refused, the count stopped at its limit.
        with pytest.raises(AppError) as refused:
            await admission.check_caps(session, KEY, caps(1, 0), queued=1)
    assert refused.value.code == "key_outstanding_cap"
    assert refused.value.extra == {"cap": 1, "outstanding": 3}
    assert "would make at least 3" in refused.value.message
