"""The group-commit recorder on SQLite and PostgreSQL: writes handed in together share a
transaction, yet each caller learns its own write's fate, and a job no longer held gets
no outcome."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import Job
from app.models.queue_item import QueueItem
from app.models.review import Review
from app.models.screening import Screening
from app.pipeline.group_commit import Finish, JobLost, Recorder, Start, Started
from app.pipeline.ruling import ScreeningRuling
from app.policy import POLICY_VERSION
from app.policy.ruling import Ruling
from app.repositories import batches, jobs, pairs, queue_items, screenings
from app.repositories.queue_items import NewQueueItem
from app.repositories.reviews import ReviewRecord
from app.vocabulary import Outcome, Pair, ParseStatus, Purpose, Role, Verdict

Sessions = async_sessionmaker[AsyncSession]
PASSED = ScreeningRuling(Ruling(Outcome.PASSED, (), POLICY_VERSION), ())
NEEDS_REVIEW = ScreeningRuling(
    Ruling(Outcome.NEEDS_REVIEW, ("judge_mismatch",), POLICY_VERSION), ()
)


async def claimed_screening(
    sessions: Sessions, marker: str, owner: str = "me", batch_id: str | None = None
) -> Start:
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", f"theorem {marker} : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=pair.id, external_id=marker, batch_id=batch_id, confirmations=0
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


async def queue(sessions: Sessions) -> list[tuple[str, bool, str | None, list[str]]]:
    """(screening id, audit, batch id, reasons) of every review queue item."""
    columns = (QueueItem.screening_id, QueueItem.audit, QueueItem.batch_id, QueueItem.reasons)
    async with sessions() as session:
        rows = await session.execute(sa.select(*columns))
        return sorted((id_, audit, batch, list(reasons)) for id_, audit, batch, reasons in rows)


async def outcomes(sessions: Sessions) -> dict[str, str | None]:
    async with sessions() as session:
        rows = await session.execute(sa.select(Screening.id, Screening.outcome))
        return {id_: outcome for id_, outcome in rows}


async def test_one_round_records_each_outcome_and_queues_what_calls_for_a_person(
    session_factory: Sessions,
) -> None:
    async with session_factory() as session:
        await batches.add(
            session, batch_id="b1", name=None, total=3, idempotency_key=None, body_sha256="x"
        )
        await session.commit()
    review_me = await claimed_screening(session_factory, "review_me", batch_id="b1")
    passes = await claimed_screening(session_factory, "passes", batch_id="b1")
    audited = await claimed_screening(session_factory, "audited")
    recorder = Recorder(session_factory)
    await asyncio.gather(
        recorder.finish(Finish(*_ids(review_me), NEEDS_REVIEW, audit_rate=0.0)),
        recorder.finish(Finish(*_ids(passes), PASSED, audit_rate=0.0)),
        recorder.finish(Finish(*_ids(audited), PASSED, audit_rate=1.0)),
    )
    assert await outcomes(session_factory) == {
        review_me.screening_id: "needs_review",
        passes.screening_id: "passed",
        audited.screening_id: "passed",
    }
    assert await queue(session_factory) == sorted(
        [
            (review_me.screening_id, False, "b1", ["judge_mismatch"]),
            (audited.screening_id, True, None, []),
        ]
    )


async def test_a_re_run_finish_leaves_the_first_outcome_and_its_queue_item(
    session_factory: Sessions,
) -> None:
    start = await claimed_screening(session_factory, "re_run")
    recorder = Recorder(session_factory)
    await recorder.finish(Finish(*_ids(start), NEEDS_REVIEW, audit_rate=0.0))
    async with session_factory() as session:  # the job is claimed again, as after a crash
        await session.execute(sa.update(Job).where(Job.id == start.job_id).values(status="running"))
        await session.commit()
    await recorder.finish(Finish(*_ids(start), PASSED, audit_rate=1.0))
    assert await outcomes(session_factory) == {start.screening_id: "needs_review"}
    assert await queue(session_factory) == [(start.screening_id, False, None, ["judge_mismatch"])]


async def test_bulk_queueing_skips_a_screening_that_has_an_item(session_factory: Sessions) -> None:
    first = await claimed_screening(session_factory, "queued_first")
    second = await claimed_screening(session_factory, "queued_second")

    def item(start: Start, reasons: list[str]) -> NewQueueItem:
        return NewQueueItem(
            screening_id=start.screening_id, reasons=reasons, audit=False, batch_id=None
        )

    async with session_factory() as session:
        await queue_items.add_many(session, [item(first, ["a"])])
        await queue_items.add_many(session, [item(first, ["b"]), item(second, ["c"])])
        await session.commit()
    assert await queue(session_factory) == sorted(
        [(first.screening_id, False, None, ["a"]), (second.screening_id, False, None, ["c"])]
    )


def _ids(start: Start) -> tuple[int, str, str]:
    return start.job_id, start.owner, start.screening_id
