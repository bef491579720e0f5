"""A provider asking to wait, through the in-process API's real worker, pipeline and client
(over loopback to the scripted provider), on SQLite and PostgreSQL.

Before the cap, `Retry-After: 1e12` raised OverflowError in the worker, which then settled
nothing, and the client stayed paused for the rest of the process's life. Now the pause is
capped (FAITHSCREEN_JUDGE_MAX_RETRY_AFTER_SECONDS, 300 s by default), the screening says why
it waits (GET /v1/screenings/{id}), /metrics counts the waiting jobs, and once the capped
pause is over the same process screens the waiting pair and the ones queued behind it.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select

from app.clock import utcnow
from app.llm import LLMClient
from app.models import Job
from app.repositories.provider_waits import WAIT_NOTE
from app.settings import Settings
from app.vocabulary import Role
from tests.support.clock import MovableClock
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi
from tests.support.scripted_openai import (
    HttpError,
    RecordedRequest,
    Reply,
    ScriptedOpenAI,
    Step,
    contract_reply,
)

CAP = 300.0
DEADLINE_SECONDS = 120.0
_SAMPLE = re.compile(r"^(faithscreen_provider_wait_\w+) (\S+)$", re.MULTILINE)


def clean_reply(request: RecordedRequest) -> Step:
    judge = request.model == JUDGE_MODEL
    return Reply(contract_reply("FAITHFUL", back_translation=None if judge else "n + 0 = n"))


def app_monotonic() -> float:
    """time.monotonic() moved with the application's clock: the moved_clock fixture then
    ends the client's pause as it makes the deferred job due."""
    return time.monotonic() + (utcnow() - datetime.now(UTC)).total_seconds()


async def use_judge_on_the_app_clock(api: Api) -> None:
    """The runtime's judge client, replaced by one whose pauses run on app_monotonic."""
    settings = api.runtime.settings
    old = api.runtime.clients[Role.JUDGE]
    api.runtime.clients[Role.JUDGE] = LLMClient(
        settings.judge, concurrency=settings.llm_concurrency, monotonic=app_monotonic
    )
    await old.aclose()


async def submit(api: Api, name: str) -> str:
    item = {"informal": f"{name}: n + 0 = n", "formal": f"theorem {name} (n : Nat) : n + 0 = n"}
    response = await api.client.post("/v1/screenings", json=item)
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    return screening_id


async def job_of(api: Api, screening_id: str) -> Job:
    async with api.runtime.sessions() as session:
        statement = select(Job).where(Job.screening_id == screening_id)
        return (await session.execute(statement)).scalar_one()


async def until(check: Callable[[], Any], what: str) -> Any:
    """Poll the async `check` until it returns something truthy (a poll, not a wait for
    the work: it returns as soon as the work is done)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (value := await check()):
        assert time.monotonic() < deadline, f"not within {DEADLINE_SECONDS} s: {what}"
        await asyncio.sleep(0.05)
    return value


async def deferred(api: Api, screening_id: str) -> Job:
    async def job() -> Job | None:
        found = await job_of(api, screening_id)
        waiting = found.status == "queued" and (found.last_error or "").startswith(WAIT_NOTE)
        return found if waiting else None

    found: Job = await until(job, f"screening {screening_id} queued again for the provider")
    return found


async def screening(api: Api, screening_id: str) -> dict[str, Any]:
    response = await api.client.get(f"/v1/screenings/{screening_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def wait_metrics(api: Api) -> dict[str, float]:
    response = await api.client.get("/metrics")
    assert response.status_code == 200, response.text
    return {name: float(value) for name, value in _SAMPLE.findall(response.text)}


@pytest.mark.parametrize("asked", ["1e12", "999999", "inf", "Fri, 31 Dec 9999 23:59:59 GMT"])
async def test_a_huge_retry_after_defers_for_the_cap_says_so_and_screening_goes_on(
    asked: str,
    start_api: StartApi,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
    moved_clock: MovableClock,
) -> None:
    assert configured_settings.judge.max_retry_after_seconds == CAP
    scripted_openai.default = clean_reply
    scripted_openai.script(
        "waited", model=JUDGE_MODEL, steps=[HttpError(429, headers={"Retry-After": asked})]
    )
    async with start_api(configured_settings) as api:
        await use_judge_on_the_app_clock(api)
        before = utcnow()
        waited = await submit(api, "waited")
        job = await deferred(api, waited)
        assert before < job.run_after <= utcnow() + timedelta(seconds=CAP)
        body = await screening(api, waited)
        assert body["status"] == "queued" and body["outcome"] is None
        assert f"(capped at {CAP:.0f} s); queued again for " in body["error"]
        # A pair submitted meanwhile meets the client-wide pause: it waits too, saying so.
        later = await submit(api, "later")
        assert "(capped at " in ((await deferred(api, later)).last_error or "")
        metrics = await wait_metrics(api)
        assert metrics["faithscreen_provider_wait_jobs"] == 2
        assert 0 < metrics["faithscreen_provider_wait_seconds"] <= CAP

        moved_clock.advance(CAP + 1)
        api.runtime.notify_worker()
        for screening_id in (waited, later):
            done = await until(
                lambda i=screening_id: _done(api, i), f"screening {screening_id} is screened"
            )
            assert (done["outcome"], done["reasons"], done["error"]) == ("passed", [], None)
        metrics = await wait_metrics(api)
    assert metrics == {
        "faithscreen_provider_wait_jobs": 0,
        "faithscreen_provider_wait_seconds": 0,
    }
    judge_calls = [r for r in scripted_openai.requests if r.model == JUDGE_MODEL]
    translator_calls = [r for r in scripted_openai.requests if r.model == TRANSLATOR_MODEL]
    assert len(judge_calls) == 3 and len(translator_calls) >= 2


async def _done(api: Api, screening_id: str) -> dict[str, Any] | None:
    body = await screening(api, screening_id)
    return body if body["status"] == "done" else None
