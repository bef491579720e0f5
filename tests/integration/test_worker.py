"""The worker's claim loop in-process, on SQLite and PostgreSQL: how a run that stopped is
settled (provider backoff, database outage, failure), and its own lapsed lease retaken."""

from __future__ import annotations

import asyncio
import inspect
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.clock import utcnow
from app.llm import ProviderBackoff
from app.models import Job
from app.pipeline.screening import Claim
from app.repositories import jobs, pairs, screenings
from app.runtime import Runtime
from app.settings import Settings
from app.vocabulary import Pair
from app.worker.failures import FailurePolicy
from app.worker.runner import Worker
from tests.support.scripted_openai import HttpError, ScriptedOpenAI

Sessions = async_sessionmaker[AsyncSession]
Step = BaseException | asyncio.Event | Callable[[Claim], Awaitable[None]]


async def queue_screening(sessions: Sessions, marker: str = "worker_case") -> str:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id)
        await session.commit()
        return screening.id


async def job_row(sessions: Sessions, screening_id: str) -> Job:
    async with sessions() as session:
        statement = sa.select(Job).where(Job.screening_id == screening_id)
        return (await session.execute(statement)).scalar_one()


async def eventually(condition: Callable[[], Any], what: str) -> None:
    """Poll `condition` (plain or async) until it holds, for up to 120 s (generous: it
    returns as soon as the condition holds, so only a real defect waits that long)."""
    try:
        async with asyncio.timeout(120):
            while True:
                if await _value(condition()):
                    return
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"not within 120 s: {what}") from None


async def _value(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


class ScriptedPipeline:
    """Stands in for ScreeningPipeline: each run takes the next step (an exception to
    raise, an Event to wait for, or a coroutine function to await with the claim), then
    completes the job as the real one does."""

    def __init__(self, sessions: Sessions, steps: list[Step]) -> None:
        self._sessions = sessions
        self._steps = steps
        self.runs = 0
        self.running = 0
        self.most_at_once = 0

    async def run(self, claim: Claim) -> None:
        self.runs += 1
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            step = self._steps.pop(0) if self._steps else None
            if isinstance(step, BaseException):
                raise step
            if isinstance(step, asyncio.Event):
                await step.wait()
            elif step is not None:
                await step(claim)
            async with self._sessions() as session:
                await jobs.complete(session, claim.job_id, claim.owner)
                await session.commit()
        finally:
            self.running -= 1


@asynccontextmanager
async def running(worker: Worker) -> AsyncIterator[Worker]:
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, grace_seconds=30))
    try:
        yield worker
    finally:
        stop.set()
        await task


def worker_for(sessions: Sessions, pipeline: ScriptedPipeline, lease: float = 30) -> Worker:
    return Worker(
        sessions,
        pipeline,  # type: ignore[arg-type]
        lease_seconds=lease,
        capacity=4,
        failures=FailurePolicy(sessions),
        idle_poll_seconds=0.05,
    )


def outage() -> BaseException:
    # As the pipeline's TaskGroup raises it when a review could not be stored.
    refused = OperationalError("INSERT ...", {}, Exception("connection refused"))
    return ExceptionGroup("unhandled errors in a TaskGroup", [refused])


async def test_a_database_outage_runs_the_screening_again_without_a_failure(
    session_factory: Sessions,
) -> None:
    screening_id = await queue_screening(session_factory)
    pipeline = ScriptedPipeline(session_factory, [outage()])
    async with running(worker_for(session_factory, pipeline)):

        async def done() -> bool:
            return (await job_row(session_factory, screening_id)).status == "done"

        await eventually(done, "the job is done")
    job = await job_row(session_factory, screening_id)
    assert (pipeline.runs, job.attempts, job.last_error) == (2, 1, None)


async def test_a_job_taken_over_during_an_outage_is_not_run_again(
    session_factory: Sessions,
) -> None:
    screening_id = await queue_screening(session_factory)

    async def outage_outlasting_the_lease(claim: Claim) -> None:
        async with session_factory() as session:
            await jobs.expire_leases(session, [claim.owner])
            await jobs.claim(session, owner="other", lease_seconds=30, limit=1)
            await session.commit()
        raise outage()

    pipeline = ScriptedPipeline(session_factory, [outage_outlasting_the_lease])
    async with running(worker_for(session_factory, pipeline)) as worker:
        await eventually(lambda: pipeline.runs == 1 and worker.busy == 0, "the run is given up")
    job = await job_row(session_factory, screening_id)
    assert (pipeline.runs, job.lease_owner, job.status, job.last_error) == (
        1,
        "other",
        "running",
        None,
    )


async def test_a_statement_sqlite_cannot_run_is_a_failure_not_an_outage(
    session_factory: Sessions,
) -> None:
    screening_id = await queue_screening(session_factory)
    no_table = sqlite3.OperationalError("no such table: reviews")
    no_table.sqlite_errorcode = sqlite3.SQLITE_ERROR  # type: ignore[attr-defined]
    error = OperationalError("SELECT ...", {}, no_table)
    pipeline = ScriptedPipeline(session_factory, [error])
    async with running(worker_for(session_factory, pipeline)):

        async def failed() -> bool:
            return (await job_row(session_factory, screening_id)).last_error is not None

        await eventually(failed, "the failure is recorded")
    job = await job_row(session_factory, screening_id)
    assert pipeline.runs == 1 and "no such table" in (job.last_error or "")


async def test_its_own_lapsed_lease_retaken_does_not_start_a_second_run(
    session_factory: Sessions,
) -> None:
    screening_id = await queue_screening(session_factory)
    release = asyncio.Event()
    pipeline = ScriptedPipeline(session_factory, [release])
    async with running(worker_for(session_factory, pipeline)) as worker:
        await eventually(lambda: pipeline.runs == 1, "the run starts")
        async with session_factory() as session:  # as if the database was away too long
            await jobs.expire_leases(session, [worker.owner])
            await session.commit()
        worker.notify()

        async def retaken() -> bool:
            return (await job_row(session_factory, screening_id)).attempts == 2

        await eventually(retaken, "the worker claims its own job again")
        release.set()
        await eventually(lambda: worker.busy == 0, "the run ends")
    assert (pipeline.runs, pipeline.most_at_once) == (1, 1)
    assert (await job_row(session_factory, screening_id)).status == "done"


async def test_a_provider_asking_for_a_long_pause_gets_the_job_released(
    configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    """Through the real pipeline, whose TaskGroup wraps the client's ProviderBackoff."""
    scripted_openai.script(steps=[HttpError(429, headers={"Retry-After": "600"})] * 2)
    runtime = Runtime.create(configured_settings, with_worker=True)
    screening_id = await queue_screening(runtime.sessions)
    runtime.start()
    try:

        async def released() -> bool:
            job = await job_row(runtime.sessions, screening_id)
            # For the pause asked, cut to FAITHSCREEN_*_MAX_RETRY_AFTER_SECONDS (300 s).
            return job.status == "queued" and job.run_after > utcnow() + timedelta(seconds=200)

        await eventually(released, "the job is queued again for after the pause")
        job = await job_row(runtime.sessions, screening_id)
    finally:
        await runtime.stop()
    assert (job.attempts, job.lease_owner) == (0, None)
    assert job.run_after <= utcnow() + timedelta(seconds=300)
    assert (job.last_error or "").startswith("provider asked to wait 600 s (capped at 300 s)")


async def test_an_uncapped_wait_of_1e12_s_defers_a_day_at_most_and_the_worker_goes_on(
    session_factory: Sessions,
) -> None:
    """The client caps a provider's wait; the worker bounds whatever reaches it too, so a
    wait no datetime can hold does not stop it settling jobs (it raised OverflowError)."""
    waited = await queue_screening(session_factory, "waited_1e12")
    pipeline = ScriptedPipeline(session_factory, [ProviderBackoff(1e12)])
    async with running(worker_for(session_factory, pipeline)):

        async def deferred() -> bool:
            job = await job_row(session_factory, waited)
            return job.status == "queued" and job.last_error is not None

        await eventually(deferred, "the job is queued again")
        later = await queue_screening(session_factory, "later")

        async def later_done() -> bool:
            return (await job_row(session_factory, later)).status == "done"

        await eventually(later_done, "a later job is run")
    job = await job_row(session_factory, waited)
    assert job.run_after <= utcnow() + timedelta(days=1)
    assert (job.last_error or "").startswith("provider asked to wait 1e+12 s; queued again for ")


async def test_a_wait_of_nan_seconds_runs_the_job_again_at_once(session_factory: Sessions) -> None:
    screening_id = await queue_screening(session_factory, "waited_nan")
    pipeline = ScriptedPipeline(session_factory, [ProviderBackoff(float("nan"))])
    async with running(worker_for(session_factory, pipeline)):

        async def done() -> bool:
            return (await job_row(session_factory, screening_id)).status == "done"

        await eventually(done, "the job is run again and done")
    job = await job_row(session_factory, screening_id)
    # Released (its claim given back) and claimed once more; not left to its lease to lapse.
    assert (pipeline.runs, job.attempts) == (2, 1)
