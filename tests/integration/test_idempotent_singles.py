"""POST /v1/screenings with an Idempotency-Key (issue 33), by the batch rules: the same key
and body within FAITHSCREEN_SCREENING_IDEMPOTENCY_SECONDS -> the first screening (200);
another body -> 409 `idempotency_key_reused`; after the window -> a new screening. Through
the API, the Python client and the MCP tool, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import httpx2
from mcp import Client
from sqlalchemy import select

from app.mcp.connect import in_process
from app.mcp.server import build_server
from app.models.screening_key import ScreeningKey
from faithscreen_client import AsyncClient, Backoff
from tests.support.in_process_api import Api, assert_error_shape
from tests.support.review_queue import pair

BODY = json.dumps({k: v for k, v in pair(1, "passed").items() if k != "replies"}).encode()
OTHER = json.dumps({k: v for k, v in pair(2, "passed").items() if k != "replies"}).encode()
JSON = {"Content-Type": "application/json"}


async def post(api: Api, body: bytes, key: str | None = "pipeline-7") -> httpx2.Response:
    headers = JSON | ({"Idempotency-Key": key} if key else {})
    return await api.client.post("/v1/screenings", content=body, headers=headers)


async def age_keys(api: Api, seconds: float) -> None:
    """Every stored key taken `seconds` earlier than it was (the clock moved on)."""
    async with api.runtime.sessions() as session:
        for row in (await session.execute(select(ScreeningKey))).scalars().all():
            row.created_at -= timedelta(seconds=seconds)
        await session.commit()


async def test_a_repeat_gets_the_first_screening_and_stores_nothing(idle_api: Api) -> None:
    first = await post(idle_api, BODY)
    assert first.status_code == 202, first.text
    counts = await idle_api.row_counts()
    again = await post(idle_api, BODY)
    assert again.status_code == 200
    assert again.json() == first.json()
    assert await idle_api.row_counts() == counts
    # Without a key, or with another one, the same body is a new screening.
    assert (await post(idle_api, BODY, key=None)).json()["id"] != first.json()["id"]
    assert (await post(idle_api, BODY, key="pipeline-8")).json()["id"] != first.json()["id"]


async def test_the_same_key_with_another_body_is_refused(idle_api: Api) -> None:
    first = await post(idle_api, BODY)
    counts = await idle_api.row_counts()
    refused = await post(idle_api, OTHER)
    assert refused.status_code == 409
    error = assert_error_shape(refused.json())
    assert error["code"] == "idempotency_key_reused" and first.json()["id"] in error["message"]
    # Byte for byte, as batches: the same JSON spaced otherwise is another body.
    respaced = await post(idle_api, json.dumps(json.loads(BODY), indent=1).encode())
    assert respaced.status_code == 409
    assert await idle_api.row_counts() == counts


async def test_after_the_window_the_key_makes_a_new_screening(idle_api: Api) -> None:
    window = idle_api.settings.screening_idempotency_seconds
    first = (await post(idle_api, BODY)).json()["id"]
    # The data moves, not the clock; half a window either side of its end, so real time
    # passing between the steps cannot change what each sees (tests/TIMING.md).
    await age_keys(idle_api, window / 2)
    assert (await post(idle_api, BODY)).json()["id"] == first  # still within it
    await age_keys(idle_api, window)
    renewed = await post(idle_api, OTHER)  # the old body no longer binds the key
    assert renewed.status_code == 202 and renewed.json()["id"] != first
    again = await post(idle_api, OTHER)
    assert (again.status_code, again.json()["id"]) == (200, renewed.json()["id"])


async def test_keys_past_their_window_are_removed_by_later_submissions(idle_api: Api) -> None:
    for n in range(3):
        await post(idle_api, BODY, key=f"old-{n}")
    await age_keys(idle_api, idle_api.settings.screening_idempotency_seconds + 1)
    await post(idle_api, OTHER, key="new")
    async with idle_api.runtime.sessions() as session:
        kept = (await session.execute(select(ScreeningKey.idempotency_key))).scalars().all()
    assert kept == ["new"]


async def test_racing_repeats_store_one_screening(idle_api: Api) -> None:
    answers = await asyncio.gather(*(post(idle_api, BODY) for _ in range(4)))
    assert sorted(a.status_code for a in answers) == [200, 200, 200, 202]
    assert len({a.json()["id"] for a in answers}) == 1
    assert (await idle_api.row_counts())["screenings"] == 1


def client_of(api: Api, transport: httpx2.AsyncBaseTransport) -> AsyncClient:
    fast = Backoff(retries=3, first=0.01, cap=0.05)
    return AsyncClient("http://127.0.0.1", "unused", transport=transport, backoff=fast)


class LostOnce(httpx2.AsyncBaseTransport):
    """The first POST reaches the app, and its answer is lost; then the app."""

    def __init__(self, api: Api) -> None:
        self.inner = httpx2.ASGITransport(app=api.app)
        self.posts = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":
            return await self.inner.handle_async_request(request)
        self.posts += 1
        response = await self.inner.handle_async_request(request)
        if self.posts == 1:
            raise httpx2.ReadError("connection reset", request=request)
        return response


async def test_the_client_sends_a_key_so_its_retry_is_a_repeat(idle_api: Api) -> None:
    lost = LostOnce(idle_api)
    item = pair(3, "passed")
    async with client_of(idle_api, lost) as client:
        screening = await client.screen(item["informal"], item["formal"], wait=False)
    assert lost.posts == 2
    assert (await idle_api.row_counts())["screenings"] == 1
    assert screening.priority == "interactive"


async def test_the_clients_idempotency_key_and_priority(idle_api: Api) -> None:
    item = pair(4, "passed")
    transport = httpx2.ASGITransport(app=idle_api.app)
    async with client_of(idle_api, transport) as client:
        first = await client.screen(
            item["informal"], item["formal"], wait=False, idempotency_key="k", priority="batch"
        )
        again = await client.screen(
            item["informal"], item["formal"], wait=False, idempotency_key="k", priority="batch"
        )
    assert again.id == first.id and first.priority == "batch"
    assert (await idle_api.row_counts())["screenings"] == 1


async def test_screen_pair_with_an_idempotency_key(idle_api: Api) -> None:
    server = build_server(in_process(idle_api.app, forward_key=False))
    item = pair(5, "passed")
    arguments = {
        "informal": item["informal"],
        "formal": item["formal"],
        "replies": item["replies"],
        "wait_seconds": 0,
        "idempotency_key": "agent-1",
    }
    async with Client(server) as client:
        first = await client.call_tool("screen_pair", arguments)
        again = await client.call_tool("screen_pair", arguments)
        other = await client.call_tool("screen_pair", arguments | {"formal": "theorem x : True"})
    assert not first.is_error and not again.is_error
    assert first.structured_content is not None and again.structured_content is not None
    assert again.structured_content["id"] == first.structured_content["id"]
    assert other.is_error and "idempotency_key_reused" in str(other.content)
    assert (await idle_api.row_counts())["screenings"] == 1
