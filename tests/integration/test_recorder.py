"""The group-commit recorder on SQLite and PostgreSQL: writes handed in together share a
transaction, yet each caller learns its own write's fate, and a job no longer held gets
no outcome."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Job
from app.models.review import Review
from app.models.screening import Screening
from app.pipeline.recorder import Finish, JobLost, Recorder, Start, Started
from app.pipeline.ruling import ScreeningRuling
from app.policy import POLICY_VERSION
from app.policy.ruling import Ruling
from app.repositories import jobs, pairs, screenings
from app.repositories.reviews import ReviewRecord
from app.vocabulary import Outcome, Pair, ParseStatus, Purpose, Role, Verdict

Sessions = async_sessionmaker[AsyncSession]
PASSED = ScreeningRuling(Ruling(Outcome.PASSED, (), POLICY_VERSION), ())


async def claimed_screening(sessions: Sessions, marker: str, owner: str = "me") -> Start:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id)
        await session.flush()
        [job] = await jobs.claim(session, owner=owner, lease_seconds=30, limit=1)
        await session.commit()
        return Start(job.id, owner, screening.id)


def review(screening_id: str, attempt: int = 1, purpose: str = Purpose.REVIEW) -> ReviewRecord:
    return ReviewRecord(
        screening_id=screening_id,
        role=Role.JUDGE,
        attempt=attempt,
        purpose=purpose,
        verdict=Verdict.FAITHFUL,
        parse_status=ParseStatus.OK,
        parser_version="parser-1",
        raw_response="VERDICT: FAITHFUL",
    )


def finish(start: Start) -> Finish:
    return Finish(start.job_id, start.owner, start.screening_id, PASSED, audit_rate=0.0)


async def count(sessions: Sessions, statement: sa.Select[tuple[int]]) -> int:
    async with sessions() as session:
        return int((await session.execute(statement)).scalar_one())


async def test_a_bad_write_fails_alone_and_the_rest_of_its_round_is_committed(
    session_factory: Sessions,
) -> None:
    start = await claimed_screening(session_factory, "bad_write")
    recorder = Recorder(session_factory)
    good = [review(start.screening_id, attempt) for attempt in (1, 2, 3)]
    bad = review(start.screening_id, 4, purpose="curiosity")  # refused by a CHECK
    results = await asyncio.gather(
        *(recorder.store(record) for record in [*good[:2], bad, good[2]]),
        return_exceptions=True,
    )
    assert [isinstance(r, sa.exc.SQLAlchemyError) for r in results] == [False, False, True, False]
    stored = sa.select(sa.func.count()).select_from(Review)
    assert await count(session_factory, stored) == 3


async def test_a_stored_attempt_is_left_as_it_is(session_factory: Sessions) -> None:
    start = await claimed_screening(session_factory, "stored_twice")
    recorder = Recorder(session_factory)
    await recorder.store(review(start.screening_id))
    await recorder.store(review(start.screening_id))
    stored = sa.select(sa.func.count()).select_from(Review)
    assert await count(session_factory, stored) == 1


async def test_a_start_marks_running_and_returns_the_pair_and_past_reviews(
    session_factory: Sessions,
) -> None:
    start = await claimed_screening(session_factory, "start")
    recorder = Recorder(session_factory)
    await recorder.store(review(start.screening_id))
    started = await recorder.start(start)
    assert isinstance(started, Started)
    assert started.pair.formal == "theorem start : 0 = 0"
    assert [call.attempt for call in started.past[Role.JUDGE]] == [1]
    status = sa.select(Screening.status).where(Screening.id == start.screening_id)
    async with session_factory() as session:
        assert (await session.execute(status)).scalar_one() == "running"


@pytest.mark.parametrize("holder", ["me", "someone else"])
async def test_only_the_holder_finishes_and_records_an_outcome(
    session_factory: Sessions, holder: str
) -> None:
    mine = await claimed_screening(session_factory, "mine")
    other = await claimed_screening(session_factory, "other", owner=holder)
    theirs = Finish(other.job_id, "me", other.screening_id, PASSED, audit_rate=0.0)
    recorder = Recorder(session_factory)
    results = await asyncio.gather(
        recorder.finish(finish(mine)), recorder.finish(theirs), return_exceptions=True
    )
    assert results[0] is None
    assert isinstance(results[1], JobLost) == (holder != "me")
    done = sa.select(sa.func.count()).where(Screening.outcome.is_not(None))
    assert await count(session_factory, done) == (1 if holder != "me" else 2)
    jobs_done = sa.select(sa.func.count()).where(Job.status == "done")
    assert await count(session_factory, jobs_done) == (1 if holder != "me" else 2)


async def test_a_done_screening_is_not_started_again_and_its_job_is_completed(
    session_factory: Sessions,
) -> None:
    start = await claimed_screening(session_factory, "done_already")
    recorder = Recorder(session_factory)
    await recorder.finish(finish(start))
    async with session_factory() as session:
        await session.execute(sa.update(Job).where(Job.id == start.job_id).values(status="running"))
        await session.commit()
    assert await recorder.start(start) is None
    status = sa.select(Job.status).where(Job.id == start.job_id)
    async with session_factory() as session:
        assert (await session.execute(status)).scalar_one() == "done"
