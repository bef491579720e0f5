"""Fault injection, the provider that asks to wait for days (issue 32, item 9): a 429 with
`Retry-After: 999999` or `1e12`, against each role, through the real pipeline on SQLite and
PostgreSQL. A 429's Retry-After pauses the whole client of its role, so each case runs on an
app of its own, one role asked to wait while the other answers FAITHFUL throughout.

Capped below what one call waits, the wait is served inside the call and the call ends as a
stored provider error; capped above it, the screening is queued again no later than the cap,
saying why, and is screened once due. Either way nothing is lost and later pairs screen.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from app.clock import utcnow
from app.models import Job
from app.settings import Settings
from tests.integration.test_fault_injection import (
    MODEL_OF,
    REPEATS,
    ROLES,
    Case,
    clean_reply,
    requests_by_role,
)
from tests.support.batches import get_json
from tests.support.clock import MovableClock
from tests.support.in_process_api import Api, StartApi
from tests.support.scripted_openai import HttpError, ScriptedOpenAI

HUGE_WAITS = ("999999", "1e12")


def asked_to_wait(seconds: str) -> HttpError:
    return HttpError(429, headers={"Retry-After": seconds})


def wait_case(number: int, name: str) -> Case:
    return Case(f"retry_after_{name}", number)


def role_settings(settings: Settings, role: str, **update: Any) -> Settings:
    """`settings` with this role's provider updated."""
    return settings.model_copy(update={role: getattr(settings, role).model_copy(update=update)})


async def submit_case(api: Api, case: Case) -> str:
    response = await api.client.post("/v1/screenings", json=case.item())
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    return screening_id


async def screening_when(
    api: Api, screening_id: str, holds: Callable[[dict[str, Any]], bool], within: float = 120
) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        body = await get_json(api, f"/v1/screenings/{screening_id}")
        if holds(body):
            return body
        assert time.monotonic() < deadline, f"not within {within} s: {body}"
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work


def is_done(body: dict[str, Any]) -> bool:
    return bool(body["status"] == "done")


async def role_asked(
    server: ScriptedOpenAI, role: str, asked: list[Case], within: float = 120
) -> None:
    deadline = time.monotonic() + within
    while not all(requests_by_role(server, case)[role] for case in asked):
        assert time.monotonic() < deadline, f"the {role} was not asked within {within} s"
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work


@pytest.mark.parametrize("role", ROLES)
async def test_a_capped_wait_ends_the_call_and_later_pairs_still_screen(
    role: str, start_api: StartApi, configured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    """Capped at 1 s, a wait of 999999 s or 1e12 s is waited out inside the call: the
    role is asked once more, answers 429 again, and its call ends as a provider error,
    stored; a pair submitted afterwards is screened as usual."""
    settings = role_settings(configured_settings, role, max_retries=1, max_retry_after_seconds=1)
    waits = [wait_case(n, seconds) for n, seconds in enumerate(HUGE_WAITS, start=1)]
    for case, seconds in zip(waits, HUGE_WAITS, strict=True):
        steps = [asked_to_wait(seconds)] * REPEATS
        scripted_openai.script(case.marker, model=MODEL_OF[role], steps=steps)
    scripted_openai.default = clean_reply
    async with start_api(settings) as api:
        ids = [await submit_case(api, case) for case in waits]
        await role_asked(scripted_openai, role, waits)  # its client is paused: now `later`
        later = await submit_case(api, Case("later", len(waits) + 1))
        bodies = [await screening_when(api, i, is_done) for i in [*ids, later]]
    for body in bodies[:-1]:
        assert (body["outcome"], body["reasons"]) == ("needs_review", [f"{role}_provider_error"])
        [call] = [r for r in body["reviews"] if r["role"] == role]
        assert call["http_status"] == 429 and "after 2 attempts" in call["error"]
    assert (bodies[-1]["outcome"], bodies[-1]["reasons"]) == ("passed", [])


async def job_of(api: Api, screening_id: str) -> Job:
    async with api.runtime.sessions() as session:
        statement = select(Job).where(Job.screening_id == screening_id)
        return (await session.execute(statement)).scalar_one()


async def released_job(
    api: Api, server: ScriptedOpenAI, role: str, case: Case, screening_id: str
) -> Job:
    """The screening's job once `role` was asked and the worker has let go of the job
    (put it back for later, or failed it)."""
    await role_asked(server, role, [case])
    deadline = time.monotonic() + 120
    while (job := await job_of(api, screening_id)).status == "running":
        assert time.monotonic() < deadline, "the worker did not let go of the job within 120 s"
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    return job


@pytest.mark.parametrize("seconds", HUGE_WAITS)
@pytest.mark.parametrize("role", ROLES)
async def test_a_long_wait_defers_the_screening_no_longer_than_the_cap(
    role: str,
    seconds: str,
    start_api: StartApi,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
    moved_clock: MovableClock,
) -> None:
    """With the default cap (minutes, past what one call waits), the screening is put back
    in the queue, due within the cap, saying why; once due, it is screened."""
    settings = role_settings(configured_settings, role, max_retries=1)
    cap = getattr(settings, role).max_retry_after_seconds
    case = wait_case(1, seconds)
    scripted_openai.script(case.marker, model=MODEL_OF[role], steps=[asked_to_wait(seconds)])
    scripted_openai.default = clean_reply
    async with start_api(settings) as api:
        screening_id = await submit_case(api, case)
        job = await released_job(api, scripted_openai, role, case, screening_id)
        now = utcnow()  # after the release, within a poll's deadline of it
        assert job.status == "queued" and "asked to wait" in (job.last_error or "")
        assert now < job.run_after <= now + timedelta(seconds=cap)
        shown = await get_json(api, f"/v1/screenings/{screening_id}")
        assert shown["status"] == "queued" and "asked to wait" in (shown["error"] or "")
    moved_clock.advance(cap + 1)
    async with start_api(settings) as api:  # a fresh client: no pause held in memory
        body = await screening_when(api, screening_id, is_done)
    assert (body["outcome"], body["reasons"]) == ("passed", [])
