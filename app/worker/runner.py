"""The claim loop. Any number of these may run against one PostgreSQL database.

A job is held by a lease that the worker extends while the screening runs. A worker that
loses its lease (it stalled, the database thought it dead) cancels the screening: whatever
it would write afterwards changes nothing, because completion requires the lease.

When the database goes away mid-run, the screening is run again once it answers and the job
is still ours, without counting an attempt; it resumes from the reviews already stored.
On stop, running screenings get `grace_seconds` to finish; the rest are cancelled and
released to the queue at once, so a restarted or other worker need not wait for the lease.
A screening stopped by a provider asking to wait goes back to the queue for that pause (the
client capped it), saying so on the screening, without counting an attempt.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
from collections.abc import Awaitable
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.clock import utcnow
from app.llm.budget import reserved_for_interactive
from app.llm.errors import ProviderBackoff
from app.llm.gate import BATCH_CALLS
from app.llm.retry import capped_wait
from app.pipeline.screening import Claim, JobLost, ScreeningPipeline
from app.process_metrics import CLAIM_SECONDS, REGISTRY, SCREENING_SECONDS
from app.repositories import jobs, metrics, provider_waits
from app.worker import causes
from app.worker.failures import FailurePolicy
from app.worker.owners import free_dead_local_jobs, new_owner_name

log = logging.getLogger("faithscreen.worker")

# While jobs run, a claim waits until 1/CLAIM_BATCH_SHARE of the capacity is free: one
# claim (two statements and a commit) then serves several jobs, not one each. The jobs
# still held keep the provider slots busy meanwhile (capacity is twice the concurrency).
# A single slot left free is still claimed for interactive work, which never waits for it.
CLAIM_BATCH_SHARE = 8
# Waits between runs of a screening while the database does not answer.
OUTAGE_FIRST_WAIT_SECONDS = 0.5
OUTAGE_MAX_WAIT_SECONDS = 10.0
# The longest a job is ever put back for: the highest FAITHSCREEN_*_MAX_RETRY_AFTER_SECONDS
# accepted (the client caps a provider's wait at that setting before the worker sees it).
LONGEST_DEFERRAL_SECONDS = 86400.0


class Worker:
    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        pipeline: ScreeningPipeline,
        *,
        lease_seconds: float,
        capacity: int,
        failures: FailurePolicy,
        idle_poll_seconds: float = 0.5,
        owner: str | None = None,
        free_dead_local_jobs: bool = False,
    ) -> None:
        self._sessions = session_factory
        self._pipeline = pipeline
        self._lease = lease_seconds
        self._capacity = capacity
        self._claim_batch = max(1, capacity // CLAIM_BATCH_SHARE)
        # Slots batch screenings leave to interactive ones, as a budget's calls in flight:
        # a single is claimed as soon as it is queued, not when a batch screening ends.
        self._batch_capacity = capacity - reserved_for_interactive(capacity)
        self._failures = failures
        self._idle_poll = idle_poll_seconds
        self.owner = owner or new_owner_name()
        # SQLite only: see app/worker/owners.py.
        self._free_dead_local_jobs = free_dead_local_jobs
        self._wake = asyncio.Event()
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._batch_jobs: set[int] = set()
        self._claims_failing = False

    def notify(self) -> None:
        """New work was queued: claim now instead of at the next poll."""
        self._wake.set()

    @property
    def busy(self) -> int:
        return len(self._tasks)

    async def run(self, stop: asyncio.Event, *, grace_seconds: float) -> None:
        """Claim and work jobs until `stop` is set, then drain within `grace_seconds`."""
        log.info("worker %s started", self.owner)
        if self._free_dead_local_jobs:
            await self._guard(self._free_dead_jobs())
        while not stop.is_set():
            claimed = await self._claim_free_slots()
            if not claimed:
                await self._idle(stop)
        await self._drain(grace_seconds)
        log.info("worker %s stopped", self.owner)

    async def _claim_free_slots(self) -> int:
        free = self._capacity - len(self._tasks)
        if free <= 0:
            return 0
        batch_room = max(0, self._batch_capacity - len(self._batch_jobs))
        if self._tasks and free < self._claim_batch:
            batch_room = 0  # too few slots free to claim batch work for: interactive only
        try:
            started = asyncio.get_running_loop().time()
            async with self._sessions() as session:
                claimed = await jobs.claim(
                    session,
                    owner=self.owner,
                    lease_seconds=self._lease,
                    limit=free,
                    batch_limit=batch_room,
                )
                await session.commit()
            REGISTRY.observe(CLAIM_SECONDS, (), asyncio.get_running_loop().time() - started)
        except SQLAlchemyError as error:
            # Once per outage, not at every poll.
            if not self._claims_failing:
                log.warning("claiming jobs failed, will retry: %s", error)
            self._claims_failing = True
            return 0
        if self._claims_failing:
            log.info("claiming jobs works again")
            self._claims_failing = False
        for job in claimed:
            if job.id in self._tasks:
                # Our own lease lapsed (the database was away) and we took the job back:
                # the task already running it goes on under the renewed lease.
                continue
            claim = Claim(job.id, job.screening_id, self.owner)
            task = asyncio.create_task(self._start(claim, job.attempts, batch=job.batch))
            self._tasks[job.id] = task
            if job.batch:
                self._batch_jobs.add(job.id)
            task.add_done_callback(functools.partial(self._done, job.id))
        return len(claimed)

    async def _start(self, claim: Claim, attempts: int, *, batch: bool = False) -> None:
        # This task's own context: its LLM calls (and the tasks it starts) are a batch
        # screening's or not, for the provider budgets (app/llm/gate.py).
        BATCH_CALLS.set(batch)
        # A job whose runs keep killing their worker never reaches `fail`: each lapsed
        # lease only counts an attempt. Past the limit it is given up before it runs.
        if self._failures.exhausted(attempts):
            error = RuntimeError(f"claimed {attempts} times without finishing")
            await self._guard(self._failures.record(claim, attempts, error))
            return
        await self._work(claim, attempts)

    async def _free_dead_jobs(self) -> None:
        await free_dead_local_jobs(self._sessions, me=self.owner)

    def _done(self, job_id: int, _task: asyncio.Task[None]) -> None:
        self._tasks.pop(job_id, None)
        self._batch_jobs.discard(job_id)
        self._wake.set()

    async def _idle(self, stop: asyncio.Event) -> None:
        self._wake.clear()
        waiters = [asyncio.ensure_future(e.wait()) for e in (self._wake, stop)]
        try:
            await asyncio.wait(waiters, timeout=self._idle_poll, return_when="FIRST_COMPLETED")
        finally:
            for waiter in waiters:
                waiter.cancel()

    async def _work(self, claim: Claim, attempts: int) -> None:
        work = asyncio.create_task(self._run_through_outages(claim))
        keeper = asyncio.create_task(self._keep_lease(claim, work))
        try:
            await work
        except asyncio.CancelledError:
            if not work.cancelled():
                raise
            log.info(
                "screening %s cancelled (lease lost or shutdown)",
                claim.screening_id,
                extra=_ids(claim),
            )
        except Exception as error:
            await self._settle(claim, attempts, error)
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper

    async def _run_through_outages(self, claim: Claim) -> None:
        while True:
            try:
                await self._pipeline.run(claim)
                await self._finished(claim)
                return
            except Exception as error:
                if not causes.is_database_outage(error):
                    raise
                log.warning(
                    "screening %s: database unavailable, will run it again once it answers: %s",
                    claim.screening_id,
                    causes.leaves(error)[0],
                    extra=_ids(claim),
                )
            await self._wait_for_database(claim)

    async def _finished(self, claim: Claim) -> None:
        """Observe the screening's latency from submission, by priority (a metric only:
        a database error here is not the screening's)."""
        try:
            async with self._sessions() as session:
                found = await metrics.submitted(session, claim.screening_id)
        except SQLAlchemyError:
            return
        if found is not None:
            seconds = (utcnow() - found[0]).total_seconds()
            REGISTRY.observe(SCREENING_SECONDS, (found[1],), seconds)

    async def _wait_for_database(self, claim: Claim) -> None:
        """Until the database answers with the job still ours; JobLost if another worker
        took it meanwhile (its lease lapsed during the outage)."""
        wait = OUTAGE_FIRST_WAIT_SECONDS
        while True:
            await asyncio.sleep(wait)
            try:
                held = await self._extend(claim)
            except SQLAlchemyError:
                wait = min(2 * wait, OUTAGE_MAX_WAIT_SECONDS)
                continue
            if not held:
                raise JobLost(claim.job_id)
            return

    async def _settle(self, claim: Claim, attempts: int, error: Exception) -> None:
        """A run that raised: back off for the provider, let go of a lost job, or fail it."""
        backoff = causes.provider_backoff(error)
        if backoff is not None:
            log.info("screening %s: %s", claim.screening_id, backoff.describe(), extra=_ids(claim))
            await self._defer(claim, backoff)
        elif causes.is_job_lost(error):
            log.warning("job %s was taken over by another worker", claim.job_id, extra=_ids(claim))
        else:
            log.error("screening %s failed", claim.screening_id, exc_info=error, extra=_ids(claim))
            await self._guard(self._failures.record(claim, attempts, error))

    async def _keep_lease(self, claim: Claim, work: asyncio.Task[object]) -> None:
        while True:
            await asyncio.sleep(self._lease / 3)
            try:
                held = await self._extend(claim)
            except SQLAlchemyError as error:
                log.warning(
                    "extending lease of job %s failed: %s", claim.job_id, error, extra=_ids(claim)
                )
                continue
            if not held:
                work.cancel()
                return

    async def _extend(self, claim: Claim) -> bool:
        async with self._sessions() as session:
            held = await jobs.extend_lease(session, claim.job_id, claim.owner, self._lease)
            await session.commit()
        return held

    async def _defer(self, claim: Claim, backoff: ProviderBackoff) -> None:
        """Back to the queue for the pause the provider asked for (the client capped it),
        the job and its screening saying so, for GET /v1/screenings/{id} and /metrics."""
        run_after = _later(backoff.retry_after)
        note = f"{backoff.describe()}; queued again for {run_after:%Y-%m-%d %H:%M:%S} UTC"

        async def defer() -> None:
            async with self._sessions() as session:
                await provider_waits.defer(
                    session,
                    claim.job_id,
                    claim.owner,
                    claim.screening_id,
                    run_after=run_after,
                    note=note,
                )
                await session.commit()

        await self._guard(defer())

    async def _release(self, claim: Claim, *, delay: float) -> None:
        run_after = _later(delay)

        async def release() -> None:
            async with self._sessions() as session:
                await jobs.release(session, claim.job_id, claim.owner, run_after=run_after)
                await session.commit()

        await self._guard(release())

    async def _guard(self, step: Awaitable[None]) -> None:
        # A failed bookkeeping write leaves the lease to expire: the job is reclaimed.
        try:
            await step
        except SQLAlchemyError as error:
            log.warning("worker bookkeeping failed; the lease will expire instead: %s", error)

    async def _drain(self, grace_seconds: float) -> None:
        pending = list(self._tasks.items())
        if not pending:
            return
        _, still_running = await asyncio.wait([t for _, t in pending], timeout=grace_seconds)
        for _, task in pending:
            if task in still_running:
                task.cancel()
        await asyncio.gather(*still_running, return_exceptions=True)
        for job_id, task in pending:
            if task in still_running:
                await self._release(Claim(job_id, "", self.owner), delay=0)


def _later(seconds: float) -> datetime:
    """Now plus `seconds`, which are kept within [0, LONGEST_DEFERRAL_SECONDS] (NaN: 0):
    a wait of 1e12 s, from wherever it came, must not overflow the datetime and stop the
    worker settling its jobs."""
    bounded = 0.0 if math.isnan(seconds) else capped_wait(seconds, LONGEST_DEFERRAL_SECONDS)
    return utcnow() + timedelta(seconds=bounded)


def _ids(claim: Claim) -> dict[str, object]:
    """The ids a JSON log line carries as fields (FAITHSCREEN_LOG_FORMAT=json)."""
    return {"screening_id": claim.screening_id, "job_id": claim.job_id}
