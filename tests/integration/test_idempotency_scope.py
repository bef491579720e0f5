"""Idempotency-Keys are each API key's own (migration 0020): two keys (two pipelines) that
send the same Idempotency-Key with different bodies get a screening (or batch) each, and
each key's repeat gets its own earlier one. Through the API and the Python client, keys on,
and with auth off (one anonymous scope), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from sqlalchemy import select

from app.models.batch import Batch
from app.models.screening_key import ScreeningKey
from app.settings import Settings
from faithscreen_client import AsyncClient, Backoff
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.review_queue import bearer, make_key, pair

KEY = "nightly-0001"


def body(n: int) -> bytes:
    """A distinct pair with no replies (queued, not decided), as bytes."""
    return json.dumps({k: v for k, v in pair(n, "passed").items() if k != "replies"}).encode()


def batch_body(*ns: int) -> bytes:
    return json.dumps({"items": [json.loads(body(n)) for n in ns]}).encode()


@pytest.fixture
async def keyed_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    settings = configured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as api:
        yield api


async def post(api: Api, path: str, api_key: str | None, content: bytes) -> Any:
    headers = {"Content-Type": "application/json", "Idempotency-Key": KEY}
    headers |= bearer(api_key) if api_key else {}
    return await api.client.post(path, content=content, headers=headers)


@pytest.mark.parametrize("path", ["/v1/screenings", "/v1/batches"])
async def test_two_api_keys_with_one_idempotency_key_do_not_meet(keyed_api: Api, path: str) -> None:
    single = path == "/v1/screenings"
    a_body, b_body = (body(1), body(2)) if single else (batch_body(1), batch_body(2))
    a = await make_key(keyed_api, "submitter", "pipeline-a")
    b = await make_key(keyed_api, "submitter", "pipeline-b")
    first_a = await post(keyed_api, path, a, a_body)
    first_b = await post(keyed_api, path, b, b_body)
    # Another key's request under the same Idempotency-Key is a new one: 202, stored.
    assert (first_a.status_code, first_b.status_code) == (202, 202), first_b.text
    assert first_a.json()["id"] != first_b.json()["id"]
    counts = await keyed_api.row_counts()
    # Each key's repeat finds its own, 200, storing nothing.
    for key, sent, first in ((a, a_body, first_a), (b, b_body, first_b)):
        again = await post(keyed_api, path, key, sent)
        assert (again.status_code, again.json()["id"]) == (200, first.json()["id"])
    # Within a key the rules stand: its key with another body (even the other key's) is 409.
    refused = await post(keyed_api, path, b, a_body)
    assert refused.status_code == 409
    error = assert_error_shape(refused.json())
    assert error["code"] == "idempotency_key_reused" and first_b.json()["id"] in error["message"]
    assert await keyed_api.row_counts() == counts


async def test_with_auth_off_every_request_shares_the_anonymous_scope(idle_api: Api) -> None:
    first = await post(idle_api, "/v1/screenings", None, body(1))
    again = await post(idle_api, "/v1/screenings", None, body(1))
    assert (first.status_code, again.status_code) == (202, 200)
    assert again.json()["id"] == first.json()["id"]
    assert (await post(idle_api, "/v1/screenings", None, body(2))).status_code == 409
    batch = await post(idle_api, "/v1/batches", None, batch_body(3))
    assert (await post(idle_api, "/v1/batches", None, batch_body(3))).status_code == 200
    async with idle_api.runtime.sessions() as session:
        scopes = (await session.execute(select(ScreeningKey.scope))).scalars().all()
        batch_scope = await session.scalar(
            select(Batch.idempotency_scope).where(Batch.id == batch.json()["id"])
        )
    assert (scopes, batch_scope) == (["anonymous"], "anonymous")


async def test_the_clients_screen_keys_are_scoped_by_its_api_key(keyed_api: Api) -> None:
    fast = Backoff(retries=0, first=0.01, cap=0.05)
    transport = httpx2.ASGITransport(app=keyed_api.app)
    ids = {}
    for n, name in enumerate(("pipeline-a", "pipeline-b")):
        key = await make_key(keyed_api, "submitter", name)
        item = pair(10 + n, "passed")
        async with AsyncClient("http://test", key, transport=transport, backoff=fast) as client:
            first = await client.screen(
                item["informal"], item["formal"], wait=False, idempotency_key=KEY
            )
            again = await client.screen(
                item["informal"], item["formal"], wait=False, idempotency_key=KEY
            )
        assert again.id == first.id
        ids[name] = first.id
    assert ids["pipeline-a"] != ids["pipeline-b"]
    assert (await keyed_api.row_counts())["screenings"] == 2
