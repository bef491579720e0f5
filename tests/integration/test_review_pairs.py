"""One pair, one question: screenings of one pair that need a person while its item is
unresolved join that item (screening_ids; the decision applies to each), also when two
are queued at once; a pair decided both ways over time is listed by
GET /v1/decisions/conflicts; the export has a line per decision and screening."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import QueueItem, QueueItemScreening
from app.repositories import pairs, screenings
from app.review_queue.enqueue import queue_for_review
from app.settings import Settings
from app.vocabulary import Pair
from tests.support.in_process_api import StartApi
from tests.support.review_queue import (
    Desk,
    bearer,
    desk_settings,
    error_code,
    pair,
    staffed,
    wait_until_blocked,
)


@pytest.fixture
async def desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    settings = desk_settings(unconfigured_settings, audit_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


async def final_decisions(desk: Desk, screening_ids: list[str]) -> list[str | None]:
    found = []
    for screening_id in screening_ids:
        response = await desk.get("bot", f"/v1/screenings/{screening_id}")
        found.append(response.json()["final_decision"])
    return found


async def test_screenings_of_one_pair_join_its_unresolved_item(desk: Desk) -> None:
    first = await desk.submit(1, "needs_review", "first")
    second = await desk.submit(1, "flagged", "second")  # an audit sample of the same pair
    third = await desk.submit(1, "needs_review", "third")
    other = await desk.submit(2, "needs_review", "other pair")
    item = await desk.item_of(first)
    assert item["screening_ids"] == [first, second, third]
    assert (await desk.item_of(other))["screening_ids"] == [other]
    assert len(await desk_items(desk)) == 2
    # The item's reasons gained the joined flagged screening's, so a filter finds it.
    found = await desk.get("admin", "/v1/queue", reason="translator_mismatch")
    assert [i["id"] for i in found.json()["items"]] == [item["id"]]
    decided = await desk.decide("alice", item["id"], {"decision": "mismatch", "note": "n < 0"})
    assert decided.status_code == 201, decided.text
    assert await final_decisions(desk, [first, second, third]) == ["mismatch"] * 3
    assert await final_decisions(desk, [other]) == [None]

    # Resolved: a new screening of the pair opens a new item, and is decided on its own.
    later = await desk.submit(1, "needs_review", "later")
    new_item = await desk.item_of(later)
    assert new_item["id"] != item["id"] and new_item["screening_ids"] == [later]
    # The earlier item cannot be reopened while the pair waits on the new one.
    refused = await desk.post("admin", f"/v1/queue/{item['id']}/reopen", {"note": "again"})
    assert error_code(refused, 409) == "pair_has_open_item"
    assert str(new_item["id"]) in refused.json()["error"]["message"]

    lines = [
        json.loads(x) for x in (await desk.get("admin", "/v1/decisions/export")).text.splitlines()
    ]
    assert [(x["screening_id"], x["decision_id"]) for x in lines] == [
        (s, decided.json()["id"]) for s in (first, second, third)
    ]
    assert [x["outcome"] for x in lines] == ["needs_review", "flagged", "needs_review"]
    assert {x["kind"] for x in lines} == {"decision"} and lines[0]["defects"] == []


async def desk_items(desk: Desk) -> list[Any]:
    async with desk.api.runtime.sessions() as session:
        return list((await session.execute(select(QueueItem))).scalars())


async def test_a_pair_decided_both_ways_is_a_conflict(desk: Desk) -> None:
    assert (await desk.get("alice", "/v1/decisions/conflicts")).json() == {
        "conflicts": [],
        "next_cursor": None,
    }
    first = await desk.submit(1, "needs_review", "march")
    item = (await desk.item_of(first))["id"]
    assert (await desk.decide("alice", item, {"decision": "faithful"})).status_code == 201
    again = await desk.submit(1, "needs_review", "june")
    later = (await desk.item_of(again))["id"]
    no_conflict = await desk.decide("bob", later, {"decision": "faithful"})
    assert no_conflict.status_code == 201
    assert (await desk.get("alice", "/v1/decisions/conflicts")).json()["conflicts"] == []
    third = await desk.submit(1, "needs_review", "july")
    last = (await desk.item_of(third))["id"]
    flip = {"decision": "mismatch", "defects": ["wrong_quantifier"]}
    assert (await desk.decide("bob", last, flip)).status_code == 201
    for n in (2, 3):  # other pairs, each decided once
        sid = await desk.submit(n, "needs_review")
        decided = await desk.decide(
            "carol", (await desk.item_of(sid))["id"], {"decision": "faithful"}
        )
        assert decided.status_code == 201

    body = (await desk.get("alice", "/v1/decisions/conflicts")).json()
    (conflict,) = body["conflicts"]
    assert conflict["informal"] == pair(1, "needs_review")["informal"]
    assert conflict["formal"].startswith("theorem add_comm_1 ")
    summary = [(i["queue_item_id"], i["decision"], i["decided_by"]) for i in conflict["items"]]
    assert summary == [
        (item, "faithful", "alice"),
        (later, "faithful", "bob"),
        (last, "mismatch", "bob"),
    ]
    assert conflict["items"][0]["screening_ids"] == [first]
    assert body["next_cursor"] is None
    assert error_code(await desk.get("bot", "/v1/decisions/conflicts"), 403) == "forbidden"
    bad = await desk.get("alice", "/v1/decisions/conflicts", cursor="x")
    assert error_code(bad, 422) == "invalid_cursor"


async def test_conflicts_page_by_cursor(desk: Desk) -> None:
    for n in (1, 2, 3):
        for verdict in ({"decision": "faithful"}, {"decision": "mismatch", "note": "no"}):
            sid = await desk.submit(n, "needs_review")
            decided = await desk.decide("alice", (await desk.item_of(sid))["id"], verdict)
            assert decided.status_code == 201, decided.text
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        body = (await desk.get("alice", "/v1/decisions/conflicts", **params)).json()
        seen += [c["pair_id"] for c in body["conflicts"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == 3 == len(set(seen)) and seen == sorted(seen)


async def test_two_screenings_of_one_pair_queued_at_once_share_one_item(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """The second transaction queues while the first's new item is uncommitted: it must
    wait on the unique open_pair_id (PostgreSQL; SQLite has one writer), then join it."""
    async with session_factory() as session:
        stored = await pairs.get_or_create(session, Pair("informal", "theorem t : 0 = 0"))
        ids = []
        for _ in range(2):
            row = await screenings.add(
                session, pair_id=stored.id, external_id=None, batch_id=None, confirmations=0
            )
            ids.append(row.id)
        await session.commit()

    def queue(session: AsyncSession, screening_id: str) -> Any:
        return queue_for_review(
            session, screening_id, "needs_review", ["judge_missing"], audit_rate=0.0
        )

    async with session_factory() as first, session_factory() as second:
        assert await queue(first, ids[0])
        racing = asyncio.create_task(queue(second, ids[1]))
        await wait_until_blocked(session_factory)
        assert not racing.done()
        await first.commit()
        assert await racing  # it joined, and says so
        await second.commit()
    async with session_factory() as session:
        items = (await session.execute(select(QueueItem))).scalars().all()
        answering = (await session.execute(select(QueueItemScreening))).scalars().all()
    (item,) = items
    assert (item.screening_id, item.open_pair_id) == (ids[0], stored.id)
    assert sorted(row.screening_id for row in answering) == sorted(ids)
    assert {row.queue_item_id for row in answering} == {item.id}


async def test_many_submissions_of_one_pair_at_once_make_one_item(desk: Desk) -> None:
    transport = httpx2.ASGITransport(app=desk.api.app)
    async with httpx2.AsyncClient(
        transport=transport, base_url="http://test", headers=bearer(desk.keys["bot"])
    ) as client:
        bodies = [pair(1, "needs_review", external_id=f"copy-{i}") for i in range(8)]
        answers = await asyncio.gather(*(client.post("/v1/screenings", json=b) for b in bodies))
    assert [a.status_code for a in answers] == [202] * 8, [a.text for a in answers]
    async with desk.api.runtime.sessions() as session:
        counted = select(func.count()).select_from(QueueItem)
        assert (await session.execute(counted)).scalar_one() == 1
    (item,) = await desk_items(desk)
    listed = await desk.item(item.id)
    assert sorted(listed["screening_ids"]) == sorted(a.json()["id"] for a in answers)


async def test_a_screening_queued_twice_waits_on_its_item_once(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        stored = await pairs.get_or_create(session, Pair("informal", "theorem t : 0 = 0"))
        row = await screenings.add(
            session, pair_id=stored.id, external_id=None, batch_id=None, confirmations=0
        )
        assert await queue_for_review(session, row.id, "needs_review", ["a"], audit_rate=0.0)
        assert not await queue_for_review(session, row.id, "needs_review", ["b"], audit_rate=0.0)
        answering = (await session.execute(select(QueueItemScreening))).scalars().all()
        (item,) = (await session.execute(select(QueueItem))).scalars().all()
    assert [r.screening_id for r in answering] == [row.id] and item.reasons == ["a"]
