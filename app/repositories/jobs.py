"""The job queue: enqueue, claim under a lease, extend, complete, release, fail.

Time is the application's clock, passed in as `now` (default: the current UTC time) so
tests can move it; every worker of one database should keep its clock in sync (NTP).

A job is held by the worker named in `lease_owner` until `lease_expires_at`. Only the
holder can extend, complete, release or fail it, so a worker presumed dead (its lease
lapsed and another worker reclaimed the job) changes nothing when it writes late.
Owner names must be unique per worker process (e.g. host:pid:random).

`attempts` counts claims, a reclaim after a lapsed lease included (the crash may be the
job's fault). A release gives its claim back: it is not a failed attempt.

Order: due jobs are claimed by (priority_rank, turn, id). Every interactive job comes
before any batch job; within a priority, keys take turns. A key's new jobs get the turns
after its own last live job, and never before the front of the queue (the lowest queued
turn): so a key that queues 100 jobs behind another's 100,000 gets one turn in two until
its jobs are gone, and a key that was idle cannot jump ahead of the work already waiting.
Both lookups, and the claim's scan, walk partial indexes holding live jobs only
(app/models/job.py). Their predicates are written as literals, not parameters: a generic
plan (psycopg prepares a statement after a few runs) can only use a partial index whose
predicate the query's text implies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    ColumnElement,
    Select,
    Table,
    and_,
    func,
    insert,
    literal_column,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from app.clock import utcnow
from app.models.job import LIVE_ONLY, QUEUED_ONLY, Job
from app.repositories.conflicts import insert_unless_exists
from app.vocabulary import JobStatus, Priority

QUEUED = JobStatus.QUEUED
RUNNING = JobStatus.RUNNING
# The number a priority is stored and ordered by: lowest first.
PRIORITY_RANKS = {Priority.INTERACTIVE: 0, Priority.BATCH: 1}


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    id: int
    screening_id: str
    # Claims so far, this one included.
    attempts: int
    # PRIORITY_RANKS' number of the job's priority.
    priority_rank: int = 0

    @property
    def batch(self) -> bool:
        return self.priority_rank == PRIORITY_RANKS[Priority.BATCH]


async def enqueue(
    session: AsyncSession,
    screening_id: str,
    *,
    run_after: datetime | None = None,
    priority: Priority = Priority.INTERACTIVE,
    submitter: str | None = None,
) -> bool:
    """Queue the screening's job (due at once unless `run_after`); False if it has one."""
    rank = PRIORITY_RANKS[priority]
    values: dict[str, Any] = {
        "screening_id": screening_id,
        "priority_rank": rank,
        "turn": await next_turn(session, submitter, rank),
        "submitter": submitter,
    }
    if run_after is not None:
        values["run_after"] = run_after
    return await insert_unless_exists(session, Job, values, ["screening_id"])


async def next_turn(session: AsyncSession, submitter: str | None, rank: int) -> int:
    """The turn of `submitter`'s next job at `rank`: after its own last live job, and no
    earlier than the front of the queue (the lowest queued turn; with none queued, just
    after the highest running one)."""
    mine = Job.submitter.is_(None) if submitter is None else Job.submitter == submitter
    last = select(func.max(Job.turn)).where(LIVE_ONLY, mine, Job.priority_rank == rank)
    front = select(func.min(Job.turn) - 1).where(QUEUED_ONLY, Job.priority_rank == rank)
    running = select(func.max(Job.turn)).where(Job.status == RUNNING, Job.priority_rank == rank)
    found = [(await session.execute(query)).scalar_one_or_none() for query in (last, front)]
    if found[1] is None:
        found[1] = (await session.execute(running)).scalar_one_or_none()
    return max((value for value in found if value is not None), default=0) + 1


async def outstanding(session: AsyncSession, submitter: str) -> dict[Priority, int]:
    """`submitter`'s queued and running jobs per priority, every priority present. Reads
    only that key's live jobs (by a partial index, or a scan when they are most of the
    table): its cost is bounded by the caps, never by history."""
    statement = (
        select(Job.priority_rank, func.count())
        .where(LIVE_ONLY, Job.submitter == submitter)
        .group_by(Job.priority_rank)
    )
    found = {rank: int(n) for rank, n in (await session.execute(statement)).all()}
    return {priority: found.get(rank, 0) for priority, rank in PRIORITY_RANKS.items()}


async def outstanding_at_most(
    session: AsyncSession, submitter: str, priority: Priority | None = None
) -> int:
    """A bound on `submitter`'s queued and running jobs (of `priority`, else all) from the
    ends of their turns, two index lookups a priority (ix_jobs_live_submitter): a key's
    live jobs at one priority hold distinct turns (`enqueue_many` gives each chunk the
    ones after the key's last, under the key's intake lock; a retried or released job
    keeps its own), so they are at most last - first + 1. Exact while the key's turns
    run without gaps, as one batch's do."""
    ranks = PRIORITY_RANKS.values() if priority is None else [PRIORITY_RANKS[priority]]
    bound = 0
    for rank in ranks:
        ends = select(func.min(Job.turn), func.max(Job.turn)).where(
            LIVE_ONLY, Job.submitter == submitter, Job.priority_rank == rank
        )
        first, last = (await session.execute(ends)).one()
        bound += 0 if first is None else last - first + 1
    return bound


async def outstanding_up_to(
    session: AsyncSession, submitter: str, limit: int, priority: Priority | None = None
) -> int:
    """`submitter`'s queued and running jobs (of `priority`, else all), counted no further
    than `limit`: the count reads at most `limit` entries of the key's live jobs (by
    ix_jobs_live_submitter), however many it has outstanding."""
    live: Select[Any] = select(literal_column("1")).where(LIVE_ONLY, Job.submitter == submitter)
    if priority is not None:
        live = live.where(Job.priority_rank == PRIORITY_RANKS[priority])
    statement = select(func.count()).select_from(live.limit(limit).subquery())
    return int((await session.execute(statement)).scalar_one())


async def claim(
    session: AsyncSession,
    *,
    owner: str,
    lease_seconds: float,
    limit: int,
    batch_limit: int | None = None,
    now: datetime | None = None,
) -> list[ClaimedJob]:
    """Lease up to `limit` jobs to `owner`: running jobs whose lease lapsed (their worker
    is presumed dead) first, then queued jobs that are due, in claim order (above). With
    `batch_limit` below what is left, the queued jobs taken past the interactive ones are
    at most `batch_limit`: a worker keeps slots for interactive work (app/worker/runner.py)."""
    now = now or utcnow()
    lease = {
        "status": RUNNING,
        "lease_owner": owner,
        "lease_expires_at": now + timedelta(seconds=lease_seconds),
        "attempts": Job.attempts + 1,
    }
    # Two statements, each able to walk an index in order; one OR of both would make
    # PostgreSQL sort every due job on every claim.
    lapsed = and_(Job.status == RUNNING, Job.lease_expires_at <= now)
    taken = await _take(session, lapsed, (Job.lease_expires_at,), limit, lease)
    due = and_(QUEUED_ONLY, _run_after(session) <= now)
    order = (Job.priority_rank, Job.turn)
    room = limit - len(taken)
    if batch_limit is not None and batch_limit < room:
        interactive = and_(due, Job.priority_rank == PRIORITY_RANKS[Priority.INTERACTIVE])
        taken += await _take(session, interactive, order, room, lease)
        room = min(limit - len(taken), batch_limit)
    taken += await _take(session, due, order, room, lease)
    return sorted(taken, key=lambda job: job.id)


def _run_after(
    session: AsyncSession,
) -> ColumnElement[datetime] | InstrumentedAttribute[datetime]:
    """`run_after` for the claim's filter. On SQLite as `+run_after`, which no index may
    search by: otherwise its planner takes ix_jobs_status_run_after's range and sorts every
    due job, where walking ix_jobs_queued_claim_order in order reads only `limit` of them.
    (PostgreSQL has no unary plus for timestamps, and plans this well by itself.)"""
    if session.get_bind().dialect.name == "postgresql":
        return Job.run_after
    return literal_column("+run_after", type_=Job.run_after.type)


async def _take(
    session: AsyncSession,
    condition: ColumnElement[bool],
    order: tuple[InstrumentedAttribute[Any], ...],
    limit: int,
    lease: dict[str, Any],
) -> list[ClaimedJob]:
    """One statement. PostgreSQL: the inner SELECT locks the rows it picks and skips rows
    another claimer has locked, so concurrent claimers never get the same job and never
    wait on each other. SQLite ignores FOR UPDATE but runs one writer at a time, and the
    statement takes the write lock before it reads. The outer WHERE repeats `condition`
    so a row changed since the inner SELECT's snapshot is not taken.
    """
    if limit < 1:
        return []
    chosen = (
        select(Job.id)
        .where(condition)
        .order_by(*order, Job.id)
        .limit(limit)
        .with_for_update(skip_locked=True)
        # A CTE, evaluated once. As a plain IN (subquery) PostgreSQL may rescan it, and
        # each rescan skips the rows just locked and picks fresh ones: more than `limit`
        # jobs get claimed (test_job_queue catches that).
        .cte("chosen")
        .prefix_with("MATERIALIZED", dialect="postgresql")
    )
    statement = (
        update(Job)
        .where(Job.id.in_(select(chosen.c.id)), condition)
        .values(lease)
        .returning(Job.id, Job.screening_id, Job.attempts, Job.priority_rank)
        .execution_options(synchronize_session=False)
    )
    return [ClaimedJob(*row) for row in (await session.execute(statement)).all()]


def _held(job_id: int, owner: str) -> ColumnElement[bool]:
    return and_(Job.id == job_id, Job.lease_owner == owner, Job.status == RUNNING)


async def _update_held(
    session: AsyncSession, job_id: int, owner: str, values: dict[str, Any]
) -> bool:
    statement = (
        update(Job)
        .where(_held(job_id, owner))
        .values(values)
        .execution_options(synchronize_session="fetch")
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


async def extend_lease(
    session: AsyncSession,
    job_id: int,
    owner: str,
    lease_seconds: float,
    *,
    now: datetime | None = None,
) -> bool:
    """Push the lease to now + `lease_seconds`; False if `owner` no longer holds the job."""
    expires = (now or utcnow()) + timedelta(seconds=lease_seconds)
    return await _update_held(session, job_id, owner, {"lease_expires_at": expires})


async def complete(session: AsyncSession, job_id: int, owner: str) -> bool:
    """Mark the job done; False (nothing changed) if `owner` no longer holds it."""
    values = {"status": JobStatus.DONE, "lease_expires_at": None}
    return await _update_held(session, job_id, owner, values)


async def release(session: AsyncSession, job_id: int, owner: str, *, run_after: datetime) -> bool:
    """Back to the queue, due at `run_after`, giving its claim back (shutdown, backoff)."""
    values = {
        "status": QUEUED,
        "run_after": run_after,
        "lease_owner": None,
        "lease_expires_at": None,
        "attempts": Job.attempts - 1,
    }
    return await _update_held(session, job_id, owner, values)


async def fail(
    session: AsyncSession, job_id: int, owner: str, *, error: str, retry_at: datetime | None
) -> bool:
    """Record a failed attempt: queued again at `retry_at`, or dead when it is None."""
    values: dict[str, Any] = {
        "status": QUEUED if retry_at is not None else JobStatus.DEAD,
        "last_error": error,
        "lease_owner": None,
        "lease_expires_at": None,
    }
    if retry_at is not None:
        values["run_after"] = retry_at
    return await _update_held(session, job_id, owner, values)


async def counts(session: AsyncSession) -> dict[str, int]:
    """Jobs per status, every status present (zero when none)."""
    statement = select(Job.status, func.count()).group_by(Job.status)
    found = {status: int(n) for status, n in (await session.execute(statement)).all()}
    return {status.value: found.get(status, 0) for status in JobStatus}


async def oldest_queued_age_seconds(
    session: AsyncSession, *, now: datetime | None = None
) -> float | None:
    """How long the longest-waiting due job has been due (queue lag); None if none is due.

    Jobs queued for later (a retry's backoff) are not waiting yet and are left out.
    """
    now = now or utcnow()
    statement = select(func.min(Job.run_after)).where(Job.status == QUEUED, Job.run_after <= now)
    oldest = (await session.execute(statement)).scalar_one_or_none()
    return None if oldest is None else (now - oldest).total_seconds()


# --- Recovering a dead worker's jobs (added for app/worker/owners.py) ---------------------


async def running_owners(session: AsyncSession) -> list[str]:
    """The distinct owners of running jobs."""
    statement = (
        select(Job.lease_owner)
        .where(Job.status == RUNNING, Job.lease_owner.is_not(None))
        .distinct()
    )
    return [owner for owner in (await session.execute(statement)).scalars() if owner]


async def expire_leases(
    session: AsyncSession, owners: list[str], *, now: datetime | None = None
) -> int:
    """Let the leases of `owners`' running jobs lapse at `now`, so the next claim takes them
    as it takes any lapsed lease (counting the attempt: the crash may be the job's fault).
    Only for owners known to be dead: a live owner would lose its jobs mid-run."""
    if not owners:
        return 0
    statement = (
        update(Job)
        .where(Job.status == RUNNING, Job.lease_owner.in_(owners))
        .values(lease_expires_at=now or utcnow())
        .execution_options(synchronize_session=False)
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount


# ---- Bulk, for batches ---------------------------------------------------------------------


async def enqueue_many(
    session: AsyncSession,
    screening_ids: Sequence[str],
    *,
    priority: Priority = Priority.INTERACTIVE,
    submitter: str | None = None,
) -> None:
    """Queue a job, due at once, for each of these new screenings (one executemany), in
    `submitter`'s next turns at `priority`. Unlike `enqueue`, a screening that has a job
    already is refused (IntegrityError)."""
    if not screening_ids:
        return
    now = utcnow()
    rank = PRIORITY_RANKS[priority]
    first = await next_turn(session, submitter, rank)
    rows = [
        {
            "screening_id": screening_id,
            "status": QUEUED,
            "attempts": 0,
            "priority_rank": rank,
            "turn": first + offset,
            "submitter": submitter,
            "run_after": now,
            "created_at": now,
            "updated_at": now,
        }
        for offset, screening_id in enumerate(screening_ids)
    ]
    await session.execute(insert(cast(Table, Job.__table__)), rows)


async def complete_many(session: AsyncSession, job_ids: Sequence[int], owner: str) -> set[int]:
    """`complete` for many jobs in one statement; the ids of those `owner` still held
    (and now done). The others are left as they were."""
    if not job_ids:
        return set()
    statement = (
        update(Job)
        .where(Job.id.in_(job_ids), Job.lease_owner == owner, Job.status == RUNNING)
        .values(status=JobStatus.DONE, lease_expires_at=None)
        .returning(Job.id)
        .execution_options(synchronize_session=False)
    )
    return set((await session.execute(statement)).scalars())


# ---- Per-key caps --------------------------------------------------------------------------

# Any constant: the class of advisory locks taken on a key's name (see lock_submitter).
SUBMITTER_LOCK_CLASS = 0x46534B43  # "FSKC"


async def lock_submitter(session: AsyncSession, submitter: str) -> None:
    """Hold `submitter`'s intake lock until the transaction ends (PostgreSQL), so its
    outstanding jobs counted after storing are exact: two requests of one key cannot both
    pass a cap. SQLite needs none: its one writer holds the database from the first insert.
    Names hashed alike share a lock; that only serialises their intake."""
    if session.get_bind().dialect.name == "postgresql":
        lock = func.pg_advisory_xact_lock(SUBMITTER_LOCK_CLASS, func.hashtext(submitter))
        await session.execute(select(lock))
