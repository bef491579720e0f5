"""Claimers racing on one database never share a job (PostgreSQL: FOR UPDATE SKIP LOCKED;
SQLite: one writer at a time)."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.repositories import jobs, pairs, screenings
from app.repositories.jobs import ClaimedJob
from app.vocabulary import Pair

JOBS = 120
CLAIMERS = 8
LIMIT = 7


async def enqueue_many(sessions: async_sessionmaker[AsyncSession], count: int) -> set[str]:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", "formal"))
        ids: set[str] = set()
        for _ in range(count):
            screening = await screenings.add(
                session, pair_id=pair.id, external_id=None, batch_id=None, confirmations=0
            )
            await jobs.enqueue(session, screening.id)
            ids.add(screening.id)
        await session.commit()
    return ids


async def claim_in_own_session(
    sessions: async_sessionmaker[AsyncSession], owner: str
) -> list[ClaimedJob]:
    async with sessions() as session:
        claimed = await jobs.claim(session, owner=owner, lease_seconds=60, limit=LIMIT)
        await session.commit()
        return claimed


async def test_concurrent_claimers_never_get_the_same_job(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    expected = await enqueue_many(session_factory, JOBS)
    claimed: list[ClaimedJob] = []
    for _ in range(JOBS):  # bound: every round claims at least one job until none are left
        rounds = await asyncio.gather(
            *(claim_in_own_session(session_factory, f"w{i}") for i in range(CLAIMERS))
        )
        got = [job for batch in rounds for job in batch]
        if not got:
            break
        assert all(len(batch) <= LIMIT for batch in rounds)
        claimed += got
    twice = [sid for sid, n in Counter(job.screening_id for job in claimed).items() if n > 1]
    assert twice == []
    assert {job.screening_id for job in claimed} == expected
    assert {job.attempts for job in claimed} == {1}
    async with session_factory() as session:
        assert (await jobs.counts(session))["running"] == JOBS
