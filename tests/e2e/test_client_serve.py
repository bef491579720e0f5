"""faithscreen_client against a real `faithscreen serve` (keys on, the scripted provider): the
blocking Client end to end, the AsyncClient's calls, and a refused key."""

from __future__ import annotations

import asyncio
import re

import pytest

from faithscreen_client import AsyncClient, Client, FaithScreenError
from tests.support.scripted_openai import FAITHFUL_REPLY, ScriptedOpenAI, contract_reply
from tests.support.serve_process import ServeProcess, StartServe, provider_env

FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)
INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem client_e2e (n : ℕ) : n + 0 = n := by sorry"
MISMATCH = {"translator": contract_reply("MISMATCH"), "judge": contract_reply("MISMATCH", None)}


def keyed_serve(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> tuple[ServeProcess, str]:
    serve = start_serve(provider_env(scripted_openai.base_url, FAITHSCREEN_AUTH="on"))
    keys = FIRST_KEY.findall(serve.log.read_text())
    assert len(keys) == 1, serve.log.read_text()
    return serve, keys[0]


def test_the_client_screens_batches_and_streams_results(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    serve, key = keyed_serve(start_serve, scripted_openai)
    with Client(serve.base_url, key, poll_seconds=0.1) as client:
        screened = client.screen(INFORMAL, FORMAL, external_id="e2e-1", timeout=120)
        assert screened.status == "done" and screened.outcome == "passed"
        assert screened.reviews[0].raw_response == FAITHFUL_REPLY
        items = [
            {"informal": INFORMAL, "formal": FORMAL, "external_id": "b-0"},
            {"informal": INFORMAL, "formal": FORMAL + " ", "replies": MISMATCH},
        ]
        batch = client.submit_batch(items, name="e2e", idempotency_key="e2e-key")
        again = client.submit_batch(items, name="e2e", idempotency_key="e2e-key")
        assert again.id == batch.id
        done = client.wait_batch(batch.id, timeout=120)
        assert done.done == done.total == 2
        results = list(client.batch_results(batch.id))
        assert [(r.index, r.external_id, r.outcome) for r in results] == [
            (0, "b-0", "passed"),
            (1, None, "flagged"),
        ]
        assert {s.id for s in client.list_screenings(page_size=1)} == {
            screened.id,
            *(r.id for r in results),
        }


def test_the_async_client_against_a_real_server(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    serve, key = keyed_serve(start_serve, scripted_openai)

    async def run() -> tuple[str | None, list[str]]:
        async with AsyncClient(serve.base_url, key, poll_seconds=0.1) as client:
            screened = await client.screen(INFORMAL, FORMAL, replies=MISMATCH)
            fetched = await client.get_screening(screened.id)
            return fetched.outcome, [s.id async for s in client.list_screenings()]

    outcome, listed = asyncio.run(run())
    assert outcome == "flagged" and len(listed) == 1


def test_a_refused_key_is_a_faithscreen_error(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    serve, _ = keyed_serve(start_serve, scripted_openai)
    with (
        Client(serve.base_url, "fs_not-a-key") as client,
        pytest.raises(FaithScreenError) as refused,
    ):
        client.get_batch("any")
    assert (refused.value.status, refused.value.code) == (401, "unauthorized")
    assert "not valid" in refused.value.message
