"""What enters the review queue: every needs_review outcome with its reasons, and a random
audit sample (FAITHSCREEN_AUDIT_RATE) of passed and flagged ones -- through each path that
records an outcome: a single submission with replies, a batch, the worker's pipeline, and
a job given up on."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import QueueItem, Screening
from app.pipeline.screening import Claim
from app.repositories import jobs, pairs, screenings
from app.review_queue.enqueue import queue_as
from app.settings import Settings
from app.vocabulary import Pair
from app.worker.failures import FailurePolicy
from tests.support.batches import post_batch, queued_item, wait_batch_done
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import pair, submit
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

OUTCOMES = ("passed", "flagged", "needs_review")


def fixed(values: list[float]) -> Iterator[float]:
    return iter(values)


def test_needs_review_is_always_queued_and_draws_no_number() -> None:
    draws = fixed([])  # any draw would raise StopIteration
    assert queue_as("needs_review", audit_rate=0.0, rng=lambda: next(draws)) == "review"


@pytest.mark.parametrize(
    ("rate", "draw", "expected"),
    [(0.5, 0.49, "audit"), (0.5, 0.5, None), (0.02, 0.0199, "audit"), (0.02, 0.03, None)],
)
@pytest.mark.parametrize("outcome", ["passed", "flagged"])
def test_passed_and_flagged_are_sampled_at_the_audit_rate(
    outcome: str, rate: float, draw: float, expected: str | None
) -> None:
    assert queue_as(outcome, audit_rate=rate, rng=lambda: draw) == expected


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_rate_one_queues_everything_and_rate_zero_only_needs_review(outcome: str) -> None:
    # The real random source: a draw is in [0, 1), so below 1.0 and never below 0.0.
    assert queue_as(outcome, audit_rate=1.0, rng=random.random) is not None
    expected = "review" if outcome == "needs_review" else None
    assert queue_as(outcome, audit_rate=0.0, rng=random.random) == expected


async def items_by_screening(api: Api) -> dict[str, QueueItem]:
    async with api.runtime.sessions() as session:
        rows = (await session.execute(select(QueueItem))).scalars()
        return {item.screening_id: item for item in rows}


async def screening_row(api: Api, screening_id: str) -> Screening:
    async with api.runtime.sessions() as session:
        found = await screenings.get(session, screening_id)
        assert found is not None
        return found


@pytest.mark.parametrize(("rate", "audited"), [(1.0, True), (0.0, False)])
async def test_single_submissions_with_replies_are_queued_at_once(
    start_api: StartApi, unconfigured_settings: Settings, rate: float, audited: bool
) -> None:
    settings = unconfigured_settings.model_copy(update={"audit_rate": rate})
    async with start_api(settings, with_worker=False) as api:
        ids = {outcome: await submit(api, None, n, outcome) for n, outcome in enumerate(OUTCOMES)}
        items = await items_by_screening(api)
        review = items[ids["needs_review"]]
        assert (review.audit, review.status, review.batch_id) == (False, "open", None)
        assert review.reasons == (await screening_row(api, ids["needs_review"])).reasons
        assert review.reasons == ["translator_missing"]
        for outcome in ("passed", "flagged"):
            assert (ids[outcome] in items) is audited
            if audited:
                item = items[ids[outcome]]
                assert item.audit
                assert item.reasons == (await screening_row(api, ids[outcome])).reasons
        assert len(items) == (3 if audited else 1)


@pytest.mark.parametrize(("rate", "audited"), [(1.0, True), (0.0, False)])
async def test_a_batch_queues_its_decided_items(
    start_api: StartApi, configured_settings: Settings, rate: float, audited: bool
) -> None:
    settings = configured_settings.model_copy(update={"audit_rate": rate})
    async with start_api(settings, with_worker=False) as api:
        items = [pair(n, outcome) for n, outcome in enumerate(OUTCOMES * 2)]
        items.append(queued_item(99))  # no replies: waits for the worker, not queued yet
        batch = await post_batch(api, items)
        queued = await items_by_screening(api)
        async with api.runtime.sessions() as session:
            rows = (await session.execute(select(Screening))).scalars().all()
        by_outcome: dict[Any, list[str]] = {}
        for row in rows:
            by_outcome.setdefault(row.outcome, []).append(row.id)
        assert {o: len(by_outcome.get(o, [])) for o in OUTCOMES} == dict.fromkeys(OUTCOMES, 2)
        assert by_outcome[None][0] not in queued
        for outcome in OUTCOMES:
            for screening_id in by_outcome[outcome]:
                if outcome == "needs_review" or audited:
                    item = queued[screening_id]
                    assert item.batch_id == batch["id"]
                    assert item.audit is (outcome != "needs_review")
                else:
                    assert screening_id not in queued
        assert len(queued) == (6 if audited else 2)


@pytest.mark.parametrize(("rate", "audited"), [(1.0, True), (0.0, False)])
async def test_the_worker_queues_what_it_decides(
    start_api: StartApi,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
    rate: float,
    audited: bool,
) -> None:
    unclear = Reply(content=contract_reply("UNCLEAR", issues="cannot tell"))
    scripted_openai.script("theorem add_comm_7 ", steps=[unclear, unclear])
    settings = configured_settings.model_copy(update={"audit_rate": rate})
    async with start_api(settings) as api:
        batch = await post_batch(api, [queued_item(7), queued_item(8)])
        await wait_batch_done(api, batch["id"])
        queued = await items_by_screening(api)
        async with api.runtime.sessions() as session:
            rows = {s.external_id: s for s in (await session.execute(select(Screening))).scalars()}
    review, passed = rows["item-7"], rows["item-8"]
    assert (review.outcome, passed.outcome) == ("needs_review", "passed")
    item = queued[review.id]
    assert (item.audit, item.batch_id, item.reasons) == (False, batch["id"], review.reasons)
    assert any(reason.endswith("_unclear") for reason in item.reasons)
    assert (passed.id in queued) is audited
    if audited:
        assert queued[passed.id].audit and queued[passed.id].reasons == []


async def test_a_job_given_up_on_is_queued_for_review(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        stored = await pairs.get_or_create(session, Pair("informal", "theorem t : 0 = 0"))
        screening = await screenings.add(
            session, pair_id=stored.id, external_id=None, batch_id=None, confirmations=0
        )
        await jobs.enqueue(session, screening.id)
        (job,) = await jobs.claim(session, owner="w1", lease_seconds=60, limit=1)
        await session.commit()
    policy = FailurePolicy(session_factory, max_attempts=1)
    await policy.record(Claim(job.id, screening.id, "w1"), 1, RuntimeError("boom"))
    async with session_factory() as session:
        (item,) = (await session.execute(select(QueueItem))).scalars().all()
        done = await screenings.get(session, screening.id)
    assert done is not None and done.outcome == "needs_review"
    assert (item.screening_id, item.reasons, item.audit) == (screening.id, ["job_failed"], False)
