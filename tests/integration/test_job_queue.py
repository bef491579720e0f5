"""The job queue: claims, leases, and what only the lease holder may do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models import Job
from app.repositories import jobs, pairs, screenings
from app.repositories.jobs import ClaimedJob
from app.vocabulary import Pair

LEASE = 30.0


async def new_screening_id(session: AsyncSession) -> str:
    pair = await pairs.get_or_create(session, Pair("informal", "formal"))
    screening = await screenings.add(
        session, pair_id=pair.id, external_id=None, batch_id=None, confirmations=0
    )
    return screening.id


async def queued(
    session: AsyncSession, count: int = 1, *, run_after: datetime | None = None
) -> list[str]:
    ids = [await new_screening_id(session) for _ in range(count)]
    for screening_id in ids:
        assert await jobs.enqueue(session, screening_id, run_after=run_after)
    return ids


async def job_row(session: AsyncSession, job_id: int) -> Job:
    statement = sa.select(Job).where(Job.id == job_id).execution_options(populate_existing=True)
    return (await session.execute(statement)).scalar_one()


def later(seconds: float) -> datetime:
    return utcnow() + timedelta(seconds=seconds)


async def claim_one(session: AsyncSession, owner: str, now: datetime | None = None) -> ClaimedJob:
    [job] = await jobs.claim(session, owner=owner, lease_seconds=LEASE, limit=1, now=now)
    return job


async def test_a_claim_leases_the_job_to_its_owner(session: AsyncSession) -> None:
    [screening_id] = await queued(session)
    now = later(1)
    job = await claim_one(session, "w1", now)
    assert (job.screening_id, job.attempts) == (screening_id, 1)
    row = await job_row(session, job.id)
    assert (row.status, row.lease_owner, row.attempts) == ("running", "w1", 1)
    assert row.lease_expires_at == now + timedelta(seconds=LEASE)


async def test_a_job_is_enqueued_once_per_screening(session: AsyncSession) -> None:
    [screening_id] = await queued(session)
    assert not await jobs.enqueue(session, screening_id)
    assert (await jobs.counts(session))["queued"] == 1


async def test_claims_take_due_jobs_oldest_first_up_to_the_limit(session: AsyncSession) -> None:
    first = await queued(session, 2, run_after=later(-20))
    second = await queued(session, 2, run_after=later(-10))
    await queued(session, 1, run_after=later(3600))
    claimed = await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=3)
    assert {j.screening_id for j in claimed} == set(first) | {claimed[-1].screening_id}
    assert claimed[-1].screening_id in second
    rest = await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=10)
    assert [j.screening_id for j in rest] == [s for s in second if s != claimed[-1].screening_id]
    assert await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=0) == []


async def test_a_job_queued_for_later_waits_until_then(session: AsyncSession) -> None:
    due = later(60)
    await queued(session, run_after=due)
    just_before = due - timedelta(seconds=1)  # a time, not a race with the real clock
    assert await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=5, now=just_before) == []
    assert len(await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=5, now=due)) == 1


async def test_a_held_lease_keeps_others_out_until_it_lapses(session: AsyncSession) -> None:
    await queued(session)
    t0 = later(1)
    job = await claim_one(session, "w1", t0)
    other = await jobs.claim(
        session, owner="w2", lease_seconds=LEASE, limit=5, now=t0 + timedelta(seconds=LEASE - 1)
    )
    assert other == []
    reclaimed = await claim_one(session, "w2", t0 + timedelta(seconds=LEASE + 1))
    assert (reclaimed.id, reclaimed.attempts) == (job.id, 2)
    assert (await job_row(session, job.id)).lease_owner == "w2"


async def test_only_the_owner_extends_the_lease(session: AsyncSession) -> None:
    await queued(session)
    t0 = later(1)
    job = await claim_one(session, "w1", t0)
    assert not await jobs.extend_lease(session, job.id, "w2", 600, now=t0)
    assert (await job_row(session, job.id)).lease_expires_at == t0 + timedelta(seconds=LEASE)
    assert await jobs.extend_lease(session, job.id, "w1", 600, now=t0 + timedelta(seconds=20))
    expires = t0 + timedelta(seconds=620)
    assert (await job_row(session, job.id)).lease_expires_at == expires
    # The extended lease holds past the original expiry.
    assert (
        await jobs.claim(
            session, owner="w2", lease_seconds=LEASE, limit=1, now=t0 + timedelta(seconds=100)
        )
        == []
    )


async def test_only_the_owner_completes_and_only_once(session: AsyncSession) -> None:
    await queued(session)
    job = await claim_one(session, "w1")
    assert not await jobs.complete(session, job.id, "w2")
    assert (await job_row(session, job.id)).status == "running"
    assert await jobs.complete(session, job.id, "w1")
    row = await job_row(session, job.id)
    assert (row.status, row.lease_expires_at) == ("done", None)
    assert not await jobs.complete(session, job.id, "w1")
    assert not await jobs.extend_lease(session, job.id, "w1", LEASE)
    assert (
        await jobs.claim(session, owner="w1", lease_seconds=LEASE, limit=5, now=later(3600)) == []
    )


async def test_a_presumed_dead_worker_writing_late_changes_nothing(session: AsyncSession) -> None:
    await queued(session)
    t0 = later(1)
    job = await claim_one(session, "slow", t0)
    await claim_one(session, "fast", t0 + timedelta(seconds=LEASE + 1))
    assert not await jobs.extend_lease(session, job.id, "slow", LEASE)
    assert not await jobs.complete(session, job.id, "slow")
    assert not await jobs.release(session, job.id, "slow", run_after=t0)
    assert not await jobs.fail(session, job.id, "slow", error="late", retry_at=None)
    row = await job_row(session, job.id)
    assert (row.status, row.lease_owner, row.last_error, row.attempts) == (
        "running",
        "fast",
        None,
        2,
    )


async def test_release_requeues_without_counting_an_attempt(session: AsyncSession) -> None:
    await queued(session)
    job = await claim_one(session, "w1")
    back_at = later(120)
    assert not await jobs.release(session, job.id, "w2", run_after=back_at)
    assert await jobs.release(session, job.id, "w1", run_after=back_at)
    row = await job_row(session, job.id)
    assert (row.status, row.lease_owner, row.lease_expires_at, row.attempts) == (
        "queued",
        None,
        None,
        0,
    )
    assert row.run_after == back_at
    just_before = back_at - timedelta(seconds=1)
    assert (
        await jobs.claim(session, owner="w2", lease_seconds=LEASE, limit=1, now=just_before) == []
    )
    again = await claim_one(session, "w2", back_at)
    assert again.attempts == 1


async def test_a_failure_with_retry_time_requeues_and_counts_the_attempt(
    session: AsyncSession,
) -> None:
    await queued(session)
    job = await claim_one(session, "w1")
    retry_at = later(30)
    assert not await jobs.fail(session, job.id, "w2", error="boom", retry_at=retry_at)
    assert await jobs.fail(session, job.id, "w1", error="boom", retry_at=retry_at)
    row = await job_row(session, job.id)
    assert (row.status, row.last_error, row.lease_owner, row.run_after) == (
        "queued",
        "boom",
        None,
        retry_at,
    )
    just_before = retry_at - timedelta(seconds=1)
    assert (
        await jobs.claim(session, owner="w1", lease_seconds=LEASE, limit=1, now=just_before) == []
    )
    assert (await claim_one(session, "w1", retry_at)).attempts == 2


async def test_a_failure_without_retry_time_is_dead_for_good(session: AsyncSession) -> None:
    await queued(session)
    job = await claim_one(session, "w1")
    assert await jobs.fail(session, job.id, "w1", error="gave up", retry_at=None)
    row = await job_row(session, job.id)
    assert (row.status, row.last_error) == ("dead", "gave up")
    far = later(10 * 365 * 86400)
    assert await jobs.claim(session, owner="w1", lease_seconds=LEASE, limit=5, now=far) == []
    assert not await jobs.complete(session, job.id, "w1")


async def test_counts_cover_every_status(session: AsyncSession) -> None:
    assert await jobs.counts(session) == {"queued": 0, "running": 0, "done": 0, "dead": 0}
    await queued(session, 4)
    a, b, _running = await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=3)
    await jobs.complete(session, a.id, "w")
    await jobs.fail(session, b.id, "w", error="x", retry_at=None)
    assert await jobs.counts(session) == {"queued": 1, "running": 1, "done": 1, "dead": 1}


async def test_queue_lag_is_the_oldest_due_job_waiting(session: AsyncSession) -> None:
    now = datetime(2030, 1, 1, tzinfo=UTC)
    assert await jobs.oldest_queued_age_seconds(session, now=now) is None
    await queued(session, run_after=now - timedelta(seconds=90))
    await queued(session, run_after=now - timedelta(seconds=30))
    await queued(session, run_after=now + timedelta(seconds=600))  # not due: not waiting
    assert await jobs.oldest_queued_age_seconds(session, now=now) == pytest.approx(90.0)
    await jobs.claim(session, owner="w", lease_seconds=LEASE, limit=1, now=now)
    assert await jobs.oldest_queued_age_seconds(session, now=now) == pytest.approx(30.0)


async def test_a_job_needs_an_existing_screening(session: AsyncSession) -> None:
    with pytest.raises(sa.exc.IntegrityError):
        await jobs.enqueue(session, "no-such-screening")
