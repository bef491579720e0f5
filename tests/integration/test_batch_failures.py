"""A batch's failure causes in GET /v1/batches/{id}: `needed_provider`, `provider_failed`
and `failures` ({reason, error, count}), the body `submit --wait` and `screen` read their
failure lines from; on SQLite and PostgreSQL, the embedded worker and a scripted provider."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.pipeline.screening import Claim
from app.repositories import batches, jobs
from app.settings import Settings
from app.worker.failures import FailurePolicy
from tests.support.batches import (
    get_json,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    supplied_item,
    wait_batch_done,
)
from tests.support.in_process_api import Api, StartApi
from tests.support.scripted_openai import HttpError, ScriptedOpenAI

# Each scripted error answers up to AGAIN judge calls of its pair: should a screening be run
# again, it meets the same error, not the scripted server's default reply (on a loaded CI
# machine the capped list once showed b and c, item 0's error `a` gone).
AGAIN = 3


@pytest.fixture
async def unretried_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    """The embedded worker, the judge's failed calls not retried by the transport. Generous
    timeouts: on a loaded machine a slow answer would fail with a timeout of its own
    instead of the scripted error."""
    update = {"max_retries": 0, "timeout_seconds": 30, "connect_timeout_seconds": 10}
    judge = configured_settings.judge.model_copy(update=update)
    async with start_api(configured_settings.model_copy(update={"judge": judge})) as api:
        yield api


async def test_failed_calls_are_grouped_by_reason_and_error(
    unretried_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    for n in (1, 2):
        scripted_openai.script(
            f"add_comm_{n} ", model="judge-model", steps=[HttpError(500, "down")] * AGAIN
        )
    scripted_openai.script(
        "add_comm_3 ", model="judge-model", steps=[HttpError(503, "later")] * AGAIN
    )
    items = [queued_item(n) for n in range(4)] + [supplied_item(4)]
    accepted = await post_batch(unretried_api, items)
    progress = await wait_batch_done(unretried_api, accepted["id"])

    where = f"(at {scripted_openai.base_url})"
    assert (progress["needed_provider"], progress["provider_failed"]) == (4, 3)
    assert progress["failures"] == [
        {"reason": "judge_provider_error", "error": f"HTTP 500: down {where}", "count": 2},
        {"reason": "judge_provider_error", "error": f"HTTP 503: later {where}", "count": 1},
    ]


async def test_a_batch_with_no_failure_lists_none(idle_api: Api) -> None:
    accepted = await post_batch(idle_api, [supplied_item(0), queued_item(1)])
    progress = await get_json(idle_api, f"/v1/batches/{accepted['id']}")
    # The queued item is not done: it needed a provider, and has not failed at one.
    assert (progress["needed_provider"], progress["provider_failed"]) == (1, 0)
    assert progress["failures"] == []


async def test_a_given_up_job_is_listed_as_job_failed(idle_api: Api) -> None:
    accepted = await post_batch(idle_api, [queued_item(0), queued_item(1)])
    sessions = idle_api.runtime.sessions
    async with sessions() as session:
        claimed = await jobs.claim(session, owner="test", lease_seconds=60, limit=10)
        await session.commit()
    policy = FailurePolicy(sessions, max_attempts=1)
    for job in claimed:
        await policy.record(Claim(job.id, job.screening_id, "test"), 1, RuntimeError("boom"))
    progress = await get_json(idle_api, f"/v1/batches/{accepted['id']}")
    assert progress["failures"] == [
        {
            "reason": "job_failed",
            "error": "gave up after 1 attempts: RuntimeError: boom",
            "count": 2,
        }
    ]
    assert progress["provider_failed"] == 0  # a given-up job is no provider's failure


async def test_causes_are_capped_most_frequent_first(
    unretried_api: Api, scripted_openai: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batches, "MAX_FAILURE_CAUSES", 2)
    scripted_openai.script("add_comm_0 ", model="judge-model", steps=[HttpError(500, "a")] * AGAIN)
    for n in (1, 2):
        scripted_openai.script(
            f"add_comm_{n} ", model="judge-model", steps=[HttpError(500, "b")] * AGAIN
        )
    scripted_openai.script("add_comm_3 ", model="judge-model", steps=[HttpError(500, "c")] * AGAIN)
    accepted = await post_batch(unretried_api, [queued_item(n) for n in range(4)])
    progress = await wait_batch_done(unretried_api, accepted["id"])
    assert [(f["error"].split(" (at")[0], f["count"]) for f in progress["failures"]] == [
        ("HTTP 500: b", 2),
        ("HTTP 500: a", 1),
    ]
    assert progress["provider_failed"] == 4
