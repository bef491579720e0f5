"""Priorities and per-key caps through the API (issue 33), keys on: which priority a
screening gets and who may choose it, that the worker's claim follows it, and the caps'
429s (which cap, Retry-After, nothing stored), on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.repositories import jobs
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.review_queue import bearer, make_key, pair

CAP = 3


@pytest.fixture
async def keyed_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    settings = configured_settings.model_copy(
        update={
            "auth": "on",
            "key_max_outstanding": 2 * CAP,
            "key_max_outstanding_interactive": CAP,
        }
    )
    async with start_api(settings, with_worker=False) as api:
        yield api


def queued(n: int, **options: Any) -> dict[str, Any]:
    """A distinct pair with no replies: it needs the worker, so it is queued."""
    body = {k: v for k, v in pair(n, "passed").items() if k != "replies"}
    return body | ({"options": options} if options else {})


async def submit(api: Api, key: str, body: dict[str, Any]) -> Any:
    return await api.client.post("/v1/screenings", json=body, headers=bearer(key))


async def submit_batch(api: Api, key: str, items: list[dict[str, Any]]) -> Any:
    return await api.client.post("/v1/batches", json={"items": items}, headers=bearer(key))


async def priorities(api: Api, key: str) -> dict[str, str]:
    listed = await api.client.get("/v1/screenings", headers=bearer(key))
    return {item["id"]: item["priority"] for item in listed.json()["items"]}


async def test_singles_are_interactive_and_batch_items_batch(keyed_api: Api) -> None:
    key = await make_key(keyed_api, "submitter", "pipeline")
    single = await submit(keyed_api, key, queued(1))
    assert single.status_code == 202
    lowered = await submit(keyed_api, key, queued(2, priority="batch"))
    batch = await submit_batch(keyed_api, key, [queued(3)])
    assert batch.status_code == 202, batch.text
    shown = await priorities(keyed_api, key)
    assert shown.pop(single.json()["id"]) == "interactive"
    assert shown.pop(lowered.json()["id"]) == "batch"
    assert list(shown.values()) == ["batch"]  # the batch's item
    got = await keyed_api.client.get(f"/v1/screenings/{single.json()['id']}", headers=bearer(key))
    assert got.json()["priority"] == "interactive"


async def test_only_an_admin_may_make_a_batchs_items_interactive(keyed_api: Api) -> None:
    submitter = await make_key(keyed_api, "submitter", "pipeline")
    reviewer = await make_key(keyed_api, "reviewer", "person")
    admin = await make_key(keyed_api, "admin", "root")
    for key in (submitter, reviewer):
        refused = await submit_batch(keyed_api, key, [queued(1, priority="interactive")])
        assert refused.status_code == 403
        assert assert_error_shape(refused.json())["code"] == "priority_not_allowed"
    assert (await keyed_api.row_counts())["screenings"] == 0
    raised = await submit_batch(keyed_api, admin, [queued(1, priority="interactive")])
    assert raised.status_code == 202, raised.text
    assert list((await priorities(keyed_api, admin)).values()) == ["interactive"]


async def test_the_worker_claims_a_single_before_an_earlier_batch(keyed_api: Api) -> None:
    key = await make_key(keyed_api, "submitter", "pipeline")
    batch = await submit_batch(keyed_api, key, [queued(n) for n in range(4)])
    assert batch.status_code == 202
    single = (await submit(keyed_api, key, queued(9))).json()["id"]
    async with keyed_api.runtime.sessions() as session:
        claimed = await jobs.claim(session, owner="test", lease_seconds=60, limit=1)
        await session.rollback()
    assert [job.screening_id for job in claimed] == [single]


async def test_past_the_interactive_cap_intake_answers_429_and_stores_nothing(
    keyed_api: Api,
) -> None:
    key = await make_key(keyed_api, "submitter", "agent")
    other = await make_key(keyed_api, "submitter", "other")
    for n in range(CAP):
        assert (await submit(keyed_api, key, queued(n))).status_code == 202
    before = await keyed_api.row_counts()
    refused = await submit(keyed_api, key, queued(CAP))
    assert refused.status_code == 429
    error = assert_error_shape(refused.json())
    assert (error["code"], error["cap"], error["outstanding"]) == (
        "key_interactive_cap",
        CAP,
        CAP + 1,
    )
    assert int(refused.headers["retry-after"]) > 0
    assert await keyed_api.row_counts() == before
    # Per key: another key is not held back; batch work and supplied replies still go in.
    assert (await submit(keyed_api, other, queued(50))).status_code == 202
    assert (await submit(keyed_api, key, queued(51, priority="batch"))).status_code == 202
    assert (await submit(keyed_api, key, pair(52, "passed"))).status_code == 202


async def test_past_the_outstanding_cap_a_batch_is_refused_whole(keyed_api: Api) -> None:
    key = await make_key(keyed_api, "submitter", "pipeline")
    assert (await submit_batch(keyed_api, key, [queued(n) for n in range(CAP)])).status_code == 202
    before = await keyed_api.row_counts()
    refused = await submit_batch(keyed_api, key, [queued(n) for n in range(10, 10 + CAP + 1)])
    assert refused.status_code == 429
    error = assert_error_shape(refused.json())
    assert (error["code"], error["cap"]) == ("key_outstanding_cap", 2 * CAP)
    assert "retry-after" in refused.headers
    assert await keyed_api.row_counts() == before
    # Up to the cap exactly is accepted; once the jobs are done the key may queue again.
    fits = await submit_batch(keyed_api, key, [queued(n) for n in range(20, 20 + CAP)])
    assert fits.status_code == 202, fits.text
    assert (await submit(keyed_api, key, queued(30))).status_code == 429
    async with keyed_api.runtime.sessions() as session:
        claimed = await jobs.claim(session, owner="w", lease_seconds=60, limit=2 * CAP)
        for job in claimed:
            await jobs.complete(session, job.id, "w")
        await session.commit()
    assert (await submit(keyed_api, key, queued(30))).status_code == 202
