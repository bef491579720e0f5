"""The worker tells the provider budgets whose calls a claimed screening makes: a batch
job's task runs with app.llm.gate.BATCH_CALLS set, an interactive one's without (the
budget lets batch calls reserve only a short way ahead, app/llm/budget.py)."""

from __future__ import annotations

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
