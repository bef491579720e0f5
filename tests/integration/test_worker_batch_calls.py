"""The worker tells the provider budgets whose calls a claimed screening makes: a batch
job's task runs with app.llm.gate.BATCH_CALLS set, an interactive one's without (the
budget lets batch calls reserve only a short way ahead, app/llm/budget.py); and a worker
full of batch work keeps a slot for an interactive screening."""

from __future__ import annotations

import asyncio

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.llm.gate import BATCH_CALLS
from app.pipeline.screening import Claim
from app.repositories import jobs, pairs, screenings
from app.vocabulary import Pair, Priority
from tests.integration.test_worker import ScriptedPipeline, eventually, running, worker_for

Sessions = async_sessionmaker[AsyncSession]


async def queue(sessions: Sessions, marker: str, priority: Priority) -> str:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id, priority=priority)
        await session.commit()
        return screening.id


async def test_a_batch_job_s_calls_are_marked_batch_and_an_interactive_one_s_are_not(
    session_factory: Sessions,
) -> None:
    batch = await queue(session_factory, "batch_case", Priority.BATCH)
    single = await queue(session_factory, "single_case", Priority.INTERACTIVE)
    seen: dict[str, bool] = {}

    async def record(claim: Claim) -> None:
        seen[claim.screening_id] = BATCH_CALLS.get()

    pipeline = ScriptedPipeline(session_factory, [record, record])
    async with running(worker_for(session_factory, pipeline)):
        await eventually(lambda: len(seen) == 2, "both screenings ran")
    assert seen == {batch: True, single: False}
    assert BATCH_CALLS.get() is False  # the worker's own context is left as it was


async def test_a_worker_full_of_batch_work_keeps_a_slot_for_an_interactive_screening(
    session_factory: Sessions,
) -> None:
    """Capacity 4 keeps max(1, 4 // 10) = 1 slot from batch jobs: with six queued and
    none ending, three run, and a single queued then starts at once beside them."""
    batch = [await queue(session_factory, f"batch_{n}", Priority.BATCH) for n in range(6)]
    release, started = asyncio.Event(), []

    async def hold(claim: Claim) -> None:
        started.append(claim.screening_id)
        if claim.screening_id in batch:
            await release.wait()

    pipeline = ScriptedPipeline(session_factory, [hold] * 7)
    async with running(worker_for(session_factory, pipeline)):
        await eventually(lambda: len(started) == 3, "three batch screenings started")
        await asyncio.sleep(0.5)  # ten idle polls: no fourth batch screening is claimed
        assert len(started) == 3 and pipeline.running == 3
        single = await queue(session_factory, "single", Priority.INTERACTIVE)
        await eventually(lambda: single in started, "the single started")
        release.set()
        await eventually(lambda: pipeline.runs == 7 and pipeline.running == 0, "all ran")
    assert sorted(started) == sorted([*batch, single])
