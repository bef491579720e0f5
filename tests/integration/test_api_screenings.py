"""POST and GET /v1/screenings in-process: what is stored and shown, supplied replies, the
worker-driven path, and that the 202 is only sent once the screening is committed."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx2
from starlette.types import Message, Receive, Scope, Send

from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api
from tests.support.scripted_openai import ScriptedOpenAI, contract_reply

INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem add_zero_right (n : ℕ) : n + 0 = n := by sorry"
# Byte-for-byte storage is checked with CRLF line ends, Unicode and trailing spaces.
EXACT = "BACK-TRANSLATION: ∀ n : ℕ, n + 0 = n  \r\nVERDICT: FAITHFUL\r\nISSUES: none \r\n"
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)
# The seed case: a quoted verdict inside the back-translation must not be read as one.
QUOTED_THEN_MISMATCH = (
    'BACK-TRANSLATION: The string contains "VERDICT: FAITHFUL".\n'
    "VERDICT: MISMATCH\nISSUES: the hypothesis h is dropped\n"
)
SCREENING_FIELDS = {
    "id",
    "status",
    "outcome",
    "reasons",
    "evidence",
    "informal",
    "formal",
    "external_id",
    "policy_version",
    "reviews",
}
REVIEW_FIELDS = {
    "role",
    "attempt",
    "purpose",
    "raw_response",
    "verdict",
    "parse_status",
    "back_translation",
    "issues",
    "finish_reason",
    "model",
    "usage",
    "latency_ms",
    "parser_version",
    "prompt_version",
    "created_at",
}


def pair_body(**extra: Any) -> dict[str, Any]:
    return {"informal": INFORMAL, "formal": FORMAL, "header": "import Mathlib", **extra}


def replies(translator: str = EXACT, judge: str = JUDGE_FAITHFUL) -> dict[str, str]:
    return {"translator": translator, "judge": judge}


async def submit(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    response = await api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()
    assert set(accepted) == {"id", "status"}
    return accepted


async def fetch(api: Api, screening_id: str) -> dict[str, Any]:
    response = await api.client.get(f"/v1/screenings/{screening_id}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def wait_done(api: Api, screening_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        body = await fetch(api, screening_id)
        if body["status"] == "done":
            return body
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} not done in {within} s: {body}")


# --- Submitting and reading --------------------------------------------------------------


async def test_a_submitted_pair_is_queued_and_readable_with_every_field(idle_api: Api) -> None:
    accepted = await submit(idle_api, pair_body(external_id="ext-1"))
    assert accepted["status"] == "queued"
    body = await fetch(idle_api, accepted["id"])
    assert set(body) >= SCREENING_FIELDS
    assert (body["id"], body["status"], body["outcome"]) == (accepted["id"], "queued", None)
    assert (body["informal"], body["formal"], body["external_id"]) == (INFORMAL, FORMAL, "ext-1")
    assert body["reviews"] == [] and body["reasons"] == []
    assert (await idle_api.row_counts())["jobs"] == 1


async def test_supplied_replies_are_decided_at_once_with_no_llm_call(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    accepted = await submit(api, pair_body(replies=replies()))
    assert accepted["status"] == "done"
    body = await fetch(api, accepted["id"])
    assert (body["status"], body["outcome"], body["reasons"]) == ("done", "passed", [])
    assert body["policy_version"]
    assert len(body["reviews"]) == 2
    for review in body["reviews"]:
        assert set(review) >= REVIEW_FIELDS
        assert review["supplied"] is True
        assert (review["attempt"], review["purpose"], review["parse_status"]) == (1, "review", "ok")
        assert review["verdict"] == "faithful" and review["model"] is None
    by_role = {r["role"]: r for r in body["reviews"]}
    assert by_role["translator"]["raw_response"] == EXACT  # byte-for-byte: CRLF, spaces kept
    assert by_role["judge"]["raw_response"] == JUDGE_FAITHFUL
    assert scripted_openai.requests == []
    assert (await api.row_counts())["jobs"] == 0


async def test_the_seed_case_is_flagged(api: Api) -> None:
    """A quoted "VERDICT: FAITHFUL" in the back-translation is text, not the verdict."""
    accepted = await submit(api, pair_body(replies=replies(QUOTED_THEN_MISMATCH)))
    body = await fetch(api, accepted["id"])
    assert body["outcome"] == "flagged"
    assert "translator_mismatch" in body["reasons"]
    translator = next(r for r in body["reviews"] if r["role"] == "translator")
    assert (translator["verdict"], translator["parse_status"]) == ("mismatch", "ok")
    assert translator["raw_response"] == QUOTED_THEN_MISMATCH
    assert translator["back_translation"] == 'The string contains "VERDICT: FAITHFUL".'


async def test_a_worker_screens_a_queued_pair_with_the_providers(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    accepted = await submit(api, pair_body(external_id="by-worker"))
    body = await wait_done(api, accepted["id"])
    assert (body["outcome"], body["reasons"]) == ("passed", [])
    by_role = {r["role"]: r for r in body["reviews"]}
    assert set(by_role) == {"translator", "judge"}
    assert by_role["translator"]["model"] == TRANSLATOR_MODEL
    assert by_role["judge"]["model"] == JUDGE_MODEL
    for review in body["reviews"]:
        assert review["supplied"] is False and review["finish_reason"] == "stop"
        assert review["prompt_version"] and review["parser_version"]
        assert review["usage"]["completion_tokens"] > 0 and review["latency_ms"] is not None
    assert {r.model for r in scripted_openai.requests} == {TRANSLATOR_MODEL, JUDGE_MODEL}


async def test_the_screening_is_committed_before_the_202_is_sent(api: Api) -> None:
    """A client that reads right after the 202 must find the screening: the session
    dependency commits before the response starts, not after it has been sent."""
    seen_at_response_start: list[int] = []

    async def watching(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_and_look(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen_at_response_start.append((await api.row_counts())["screenings"])
            await send(message)

        await api.app(scope, receive, send_and_look)

    transport = httpx2.ASGITransport(app=watching)
    async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.post("/v1/screenings", json=pair_body(replies=replies()))
    assert response.status_code == 202
    assert seen_at_response_start == [1]


async def test_a_resubmitted_pair_is_stored_once_and_screened_twice(idle_api: Api) -> None:
    first = await submit(idle_api, pair_body())
    second = await submit(idle_api, pair_body())
    assert first["id"] != second["id"]
    counts = await idle_api.row_counts()
    assert (counts["pairs"], counts["screenings"], counts["jobs"]) == (1, 2, 2)


# --- Listing -------------------------------------------------------------------------------


async def test_listing_pages_newest_first_and_sees_each_item_once(idle_api: Api) -> None:
    ids = [(await submit(idle_api, pair_body(external_id=f"page-{i}")))["id"] for i in range(5)]
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(3):
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        response = await idle_api.client.get("/v1/screenings", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["items"]) <= 2
        seen += [item["id"] for item in page["items"]]
        cursor = page["next_cursor"]
    assert cursor is None
    assert seen == list(reversed(ids))


async def test_listing_filters_by_external_id_outcome_and_status(idle_api: Api) -> None:
    passed = await submit(idle_api, pair_body(external_id="a", replies=replies()))
    flagged = await submit(
        idle_api, pair_body(external_id="b", replies=replies(QUOTED_THEN_MISMATCH))
    )
    queued = await submit(idle_api, pair_body(external_id="a"))
    expectations = {
        (("external_id", "a"),): {passed["id"], queued["id"]},
        (("external_id", "nobody"),): set(),
        (("outcome", "flagged"),): {flagged["id"]},
        (("outcome", "passed"),): {passed["id"]},
        (("status", "queued"),): {queued["id"]},
        (("status", "done"),): {passed["id"], flagged["id"]},
        (("status", "done"), ("external_id", "a")): {passed["id"]},
    }
    for filters, expected in expectations.items():
        response = await idle_api.client.get("/v1/screenings", params=dict(filters))
        assert response.status_code == 200, response.text
        assert {item["id"] for item in response.json()["items"]} == expected, filters
