"""Batches at size, and batches beside other traffic: a 10,000-item batch ingests and its
counts add up; concurrent batches and single submissions while the embedded worker works
all succeed (on SQLite: no "database is locked" reaches a client)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from typing import Any

import httpx2
from sqlalchemy import func, select

from app.models import Review, Screening
from tests.support.batches import (
    NDJSON,
    TRANSLATOR_MISMATCH,
    get_json,
    jsonl,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    results,
    row_counts,
    supplied_item,
    wait_batch_done,
)
from tests.support.in_process_api import Api
from tests.support.scripted_openai import ScriptedOpenAI

FULL = 10_000


async def test_a_full_batch_of_supplied_replies_ingests_and_its_counts_add_up(
    idle_api: Api,
) -> None:
    assert idle_api.settings.max_batch_items == FULL  # the default limit, reached exactly
    items = (
        supplied_item(n, translator=TRANSLATOR_MISMATCH) if n % 7 == 0 else supplied_item(n)
        for n in range(FULL)
    )
    response = await idle_api.client.post(
        "/v1/batches", content=jsonl(items), headers=NDJSON, timeout=600
    )
    assert response.status_code == 202, response.text
    batch_id = response.json()["id"]

    progress = await get_json(idle_api, f"/v1/batches/{batch_id}")
    flagged = len(range(0, FULL, 7))
    assert (progress["total"], progress["done"], progress["status"]) == (FULL, FULL, "done")
    assert progress["outcomes"] == {"passed": FULL - flagged, "flagged": flagged, "needs_review": 0}
    for role in ("translator", "judge"):
        assert progress["parse_statuses"][role]["ok"] == FULL
        assert sum(progress["parse_statuses"][role].values()) == FULL
    counts = await row_counts(idle_api)
    assert counts == {
        "batches": 1,
        "screenings": FULL,
        "pairs": FULL,
        "jobs": 0,
        "reviews": 2 * FULL,
    }

    lines = await results(idle_api, batch_id)
    assert [line["index"] for line in lines] == list(range(FULL))
    assert Counter(line["outcome"] for line in lines) == {
        "passed": FULL - flagged,
        "flagged": flagged,
    }


def mixed_batch(start: int) -> dict[str, Any]:
    """Mostly supplied replies (decided during the request), a few for the worker."""
    items = [supplied_item(n) for n in range(start, start + 300)]
    items += [queued_item(n) for n in range(start + 300, start + 310)]
    return {"items": items}


async def test_concurrent_batches_and_single_submissions_while_the_worker_works(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.latency = 0.01
    # Work for the worker first, so it claims and writes throughout what follows.
    backlog = await post_batch(api, [queued_item(n) for n in range(100_000, 100_100)])
    post = api.client.post
    requests = [post("/v1/batches", json=mixed_batch(1000 * k)) for k in range(1, 7)]
    requests += [post("/v1/screenings", json=supplied_item(50_000 + n)) for n in range(6)]
    requests += [post("/v1/screenings", json=queued_item(60_000 + n)) for n in range(6)]
    requests += [api.client.get(f"/v1/batches/{backlog['id']}") for _ in range(2)]
    responses: list[httpx2.Response] = await asyncio.gather(*requests)

    failed = [(r.status_code, r.text) for r in responses if r.status_code not in (200, 202)]
    assert failed == []
    assert not any("locked" in r.text for r in responses)
    for response in responses[:6]:
        await wait_batch_done(api, response.json()["id"], within=120)
    await wait_batch_done(api, backlog["id"], within=120)
    for response in responses[6:18]:
        await wait_screening_done(api, response.json()["id"])
    await every_screening_has_one_outcome_and_no_repeated_review(api, 100 + 6 * 310 + 12)


async def wait_screening_done(api: Api, screening_id: str, within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while (await get_json(api, f"/v1/screenings/{screening_id}"))["status"] != "done":
        assert time.monotonic() < deadline, f"screening {screening_id} not done in {within} s"
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work


async def every_screening_has_one_outcome_and_no_repeated_review(api: Api, total: int) -> None:
    by_status = select(Screening.status, func.count(Screening.outcome), func.count())
    reviews = select(Review.screening_id, Review.role, Review.attempt)
    repeated = reviews.group_by(*reviews.selected_columns).having(func.count() > 1)
    async with api.runtime.sessions() as session:
        counts = (await session.execute(by_status.group_by(Screening.status))).all()
        assert (await session.execute(repeated)).all() == []
    assert [tuple(row) for row in counts] == [("done", total, total)]
