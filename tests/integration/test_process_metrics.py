"""This process's own counters on /metrics (on SQLite and PostgreSQL): the LLM client's
attempts by result (a 429 apart), tokens as the provider reported them, time paused for a
Retry-After, calls in flight back to 0, claim latency, and screening latency by priority;
and the endpoint a `faithscreen worker` serves them on. Checked as differences around the
work, since the counters belong to the (test) process."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator

import httpx2
import pytest

from app.observability.process_families import serve_process_metrics
from app.settings import Settings
from tests.support.batches import post_batch, queued_item, wait_batch_done
from tests.support.in_process_api import TRANSLATOR_MODEL, Api, StartApi
from tests.support.scripted_openai import HttpError, Reply, ScriptedOpenAI

_LINE = re.compile(r"^([a-z_]+)(?:\{(.*)\})? (\S+)$")
USAGE = {"prompt_tokens": 1000, "completion_tokens": 30, "reasoning_tokens": 5}


@pytest.fixture
async def metrics_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    settings = configured_settings.model_copy(update={"audit_rate": 0.0})
    async with start_api(settings) as api:
        yield api


def series(body: str) -> dict[tuple[str, str], float]:
    found: dict[tuple[str, str], float] = {}
    for line in body.splitlines():
        match = _LINE.match(line)
        if match and match[1].startswith("faithscreen_process_"):
            found[(match[1], match[2] or "")] = float(match[3])
    return found


async def scrape(api: Api) -> dict[tuple[str, str], float]:
    response = await api.client.get("/metrics")
    assert response.status_code == 200, response.text
    return series(response.text)


def grew(before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]) -> dict:
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v != before.get(k, 0.0)}


async def test_attempts_tokens_pauses_and_latencies_are_counted(
    metrics_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.default = Reply(usage=USAGE)
    # One 429 with a short Retry-After for the translator of the first pair.
    scripted_openai.script(
        "n + 100 = 100 + n",
        model=TRANSLATOR_MODEL,
        steps=[HttpError(429, headers={"Retry-After": "0.2"})],
    )
    before = await scrape(metrics_api)
    batch = await post_batch(metrics_api, [queued_item(n) for n in (100, 101, 102)])
    await wait_batch_done(metrics_api, batch["id"])
    single = {"informal": "For every n, n = n.", "formal": "theorem s (n : ℕ) : n = n := rfl"}
    response = await metrics_api.client.post("/v1/screenings", json=single)
    assert response.status_code == 202, response.text
    screening_id = response.json()["id"]
    deadline = asyncio.get_running_loop().time() + 60
    while (await metrics_api.client.get(f"/v1/screenings/{screening_id}")).json()[
        "status"
    ] != "done":
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    after = await scrape(metrics_api)
    change = grew(before, after)

    attempts = "faithscreen_process_llm_attempts_total"
    assert change[(attempts, 'role="translator",result="http_429"')] == 1
    assert change[(attempts, 'role="translator",result="ok"')] == 4
    assert change[(attempts, 'role="judge",result="ok"')] == 4
    tokens = "faithscreen_process_llm_tokens_total"
    assert change[(tokens, 'role="judge",kind="prompt"')] == 4 * 1000
    assert change[(tokens, 'role="translator",kind="reasoning"')] == 4 * 5
    # The Retry-After paused the translator's next attempt (0.2 s, less the time it took).
    pause = change[
        ("faithscreen_process_llm_wait_seconds_total", 'role="translator",cause="pause"')
    ]
    assert 0 < pause <= 0.2
    assert after[("faithscreen_process_llm_in_flight", 'role="translator"')] == 0
    screening = "faithscreen_process_screening_seconds_count"
    assert change[(screening, 'priority="batch"')] == 3
    assert change[(screening, 'priority="interactive"')] == 1
    assert change[("faithscreen_process_claim_seconds_count", "")] >= 1
    assert change[("faithscreen_process_llm_attempt_seconds_count", 'role="judge"')] == 4


async def test_a_worker_serves_its_own_counters_on_its_port() -> None:
    server = await serve_process_metrics("127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            response = await client.get("/metrics")
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
            assert "# TYPE faithscreen_process_llm_attempts_total counter" in response.text
            assert "# TYPE faithscreen_process_screening_seconds histogram" in response.text
            assert (await client.get("/v1/screenings")).status_code == 404
    finally:
        server.close()
        await server.wait_closed()
