"""Around deciding a queue item, over HTTP on SQLite and PostgreSQL (issue 35, items 6 and
11): time per item runs from the reviewer's first opening of the item, not from the claim;
free-text search of the queue; assignment (who may assign whom, the "mine" filter, the
audit trail); an append-only comment thread; and the blind rules held by all three."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError

from app.models import Comment, ThreadRowIsAppendOnly
from app.settings import Settings
from tests.support.clock import MovableClock
from tests.support.in_process_api import StartApi
from tests.support.review_queue import Desk, desk_settings, error_code, queue_items, staffed

FAITHFUL = {"decision": "faithful"}
MISMATCH = {"decision": "mismatch", "note": "n < 0 dropped"}
TOKEN = re.compile(r'name="csrf_token" value="([0-9a-f]{64})"')
REWRITES = (
    "UPDATE comments SET body = 'rewritten'",
    "DELETE FROM comments",
    "UPDATE assignments SET assignee = 'x'",
    "DELETE FROM assignments",
)


@pytest.fixture
async def desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    """Every passed or flagged screening is an audit sample: blind to reviewers."""
    settings = desk_settings(unconfigured_settings, audit_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


async def stats_of(desk: Desk, who: str) -> dict[str, Any]:
    response = await desk.get("admin", "/v1/review/stats")
    assert response.status_code == 200, response.text
    return next(p for p in response.json()["people"] if p["actor"] == who)


async def ids(desk: Desk, who: str, **params: Any) -> list[int]:
    return [i["id"] for i in await queue_items(desk.api, desk.keys[who], **params)]


# ---- Time per item ------------------------------------------------------------------------


async def test_time_per_item_runs_from_the_first_opening_not_the_claim(
    desk: Desk, moved_clock: MovableClock
) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    assert (await desk.get("alice", f"/v1/queue/{item}")).status_code == 200  # opened
    moved_clock.advance(90)
    # Reading it again later does not restart the time.
    assert (await desk.get("alice", f"/v1/queue/{item}")).status_code == 200
    moved_clock.advance(30)
    # Claimed the moment it is decided, as the page does: a claim-based time reads 0 s.
    response = await desk.decide("alice", item, FAITHFUL)
    assert response.status_code == 201, response.text
    assert response.json()["opened_at"] is not None
    assert response.json()["claimed_at"] is not None
    assert 119 <= (await stats_of(desk, "alice"))["median_seconds"] <= 125


async def test_a_decision_without_an_opening_is_not_timed_and_a_reopen_restarts_it(
    desk: Desk, moved_clock: MovableClock
) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    assert (await desk.decide("bob", item, FAITHFUL)).status_code == 201
    assert (await stats_of(desk, "bob"))["median_seconds"] is None
    # alice opens it, then an admin reopens it: her time runs from her next opening.
    await desk.get("alice", f"/v1/queue/{item}")
    moved_clock.advance(3600)
    assert (await desk.post("admin", f"/v1/queue/{item}/reopen")).status_code == 201
    await desk.get("alice", f"/v1/queue/{item}")
    moved_clock.advance(40)
    assert (await desk.decide("alice", item, MISMATCH)).status_code == 201
    assert 39 <= (await stats_of(desk, "alice"))["median_seconds"] <= 45


# ---- Search -------------------------------------------------------------------------------


async def test_search_finds_statements_and_external_ids_case_insensitively(desk: Desk) -> None:
    first = (await desk.item_of(await desk.submit(1, "needs_review", "MiniF2F-Algebra-7")))["id"]
    second = (await desk.item_of(await desk.submit(2, "needs_review", "other")))["id"]
    assert await ids(desk, "alice", q="n + 2 = 2") == [second]  # informal
    assert await ids(desk, "alice", q="ADD_COMM_1") == [first]  # formal, any case
    assert await ids(desk, "alice", q="minif2f-algebra") == [first]  # external id
    assert await ids(desk, "alice", q="natural number") == [first, second]
    # `%` and `_` are themselves, not patterns.
    assert await ids(desk, "alice", q="%") == []
    assert await ids(desk, "alice", q="add_comm_") == [first, second]
    assert await ids(desk, "alice", q="add%comm") == []
    # Bounded: a term longer than the API takes is a 422.
    response = await desk.get("alice", "/v1/queue", q="x" * 201)
    assert error_code(response, 422) == "validation_error"


async def test_search_does_not_find_a_blind_item_by_a_screening_it_hides(desk: Desk) -> None:
    opener = await desk.submit(3, "passed", "audit-opener")  # an audit sample: blind
    await desk.submit(3, "needs_review", "joined-secret")  # joins it; its id is withheld
    item = (await desk.item_of(opener))["id"]
    assert await ids(desk, "admin", q="joined-secret") == [item]
    assert await ids(desk, "alice", q="joined-secret") == []
    assert await ids(desk, "alice", q="audit-opener") == [item]
    assert await ids(desk, "alice", q="n + 3 = 3") == [item]
    # Once resolved it is blind no more: the joined screening is found.
    assert (await desk.decide("alice", item, FAITHFUL)).status_code == 201
    assert await ids(desk, "alice", q="joined-secret") == [item]


# ---- Assignment ---------------------------------------------------------------------------


async def assign(desk: Desk, who: str, item: int, assignee: str | None) -> Any:
    return await desk.post(who, f"/v1/queue/{item}/assign", {"assignee": assignee})


async def test_admins_assign_anyone_reviewers_only_themselves(desk: Desk) -> None:
    first = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    second = (await desk.item_of(await desk.submit(2, "needs_review")))["id"]
    response = await assign(desk, "admin", first, "alice")
    assert response.status_code == 200 and response.json()["assigned_to"] == "alice"
    assert error_code(await assign(desk, "bob", second, "alice"), 403) == "assign_self_only"
    assert error_code(await assign(desk, "bob", first, "bob"), 403) == "assigned_to_other"
    assert error_code(await assign(desk, "bob", first, None), 403) == "not_assignee"
    assert (await assign(desk, "bob", second, "bob")).status_code == 200
    assert error_code(await assign(desk, "admin", second, "bot"), 422) == "unknown_reviewer"
    assert error_code(await assign(desk, "admin", second, "nobody"), 422) == "unknown_reviewer"
    assert error_code(await assign(desk, "bot", second, "bot"), 403) == "forbidden"
    # The "mine" filter, and the assignee in the listing.
    assert await ids(desk, "alice", mine="true") == [first]
    assert await ids(desk, "bob", mine="true") == [second]
    listed = {i["id"]: i["assigned_to"] for i in await queue_items(desk.api, desk.keys["carol"])}
    assert listed == {first: "alice", second: "bob"}
    # alice gives hers back; assigning as it is adds no row.
    assert (await assign(desk, "alice", first, None)).json()["assigned_to"] is None
    assert (await assign(desk, "alice", first, None)).json()["row"] is None
    assert await ids(desk, "alice", mine="true") == []
    trail = (await desk.get("carol", f"/v1/queue/{first}/assignments")).json()
    assert [(r["assignee"], r["actor"], r["actor_role"]) for r in trail] == [
        ("alice", "admin", "admin"),
        (None, "alice", "reviewer"),
    ]


async def test_assignment_refuses_a_resolved_item_and_a_double_reviews_first_person(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    settings = desk_settings(unconfigured_settings, review_double_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        desk = await staffed(api)
        item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
        assert (await desk.decide("alice", item, FAITHFUL)).status_code == 201
        code = error_code(await assign(desk, "admin", item, "alice"), 409)
        assert code == "needs_another_reviewer"
        assert (await assign(desk, "admin", item, "bob")).status_code == 200
        assert (await desk.decide("bob", item, FAITHFUL)).status_code == 201
        assert error_code(await assign(desk, "admin", item, "carol"), 409) == "already_resolved"


# ---- Comments -----------------------------------------------------------------------------


async def comments(desk: Desk, who: str, item: int) -> list[str]:
    response = await desk.get(who, f"/v1/queue/{item}/comments")
    assert response.status_code == 200, response.text
    return [f"{c['actor']}: {c['body']}" for c in response.json()]


async def test_comments_are_kept_in_order_and_append_only(desk: Desk) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    for who, body in (("alice", "Is n a natural?"), ("bob", "Yes: ℕ in the Lean.")):
        response = await desk.post(who, f"/v1/queue/{item}/comments", {"body": body})
        assert response.status_code == 201, response.text
    assert await comments(desk, "carol", item) == [
        "alice: Is n a natural?",
        "bob: Yes: ℕ in the Lean.",
    ]
    blank = await desk.post("alice", f"/v1/queue/{item}/comments", {"body": " \n "})
    assert error_code(blank, 422) == "comment_empty"
    missing = await desk.post("alice", "/v1/queue/999999/comments", {"body": "hello"})
    assert error_code(missing, 404) == "not_found"
    assert (await assign(desk, "alice", item, "alice")).status_code == 200
    async with desk.api.runtime.sessions() as session:
        for statement in REWRITES:
            with pytest.raises(DBAPIError, match="append-only"):
                await session.execute(text(statement))
            await session.rollback()
    assert await comments(desk, "carol", item) == [
        "alice: Is n a natural?",
        "bob: Yes: ℕ in the Lean.",
    ]


async def test_a_blind_item_shows_a_reviewer_only_their_own_comments(desk: Desk) -> None:
    item = (await desk.item_of(await desk.submit(1, "flagged")))["id"]  # an audit: blind
    await desk.post("admin", f"/v1/queue/{item}/comments", {"body": "the models said MISMATCH"})
    await desk.post("alice", f"/v1/queue/{item}/comments", {"body": "I lean mismatch"})
    await desk.post("bob", f"/v1/queue/{item}/comments", {"body": "unsure here"})
    assert await comments(desk, "bob", item) == ["bob: unsure here"]
    assert await comments(desk, "alice", item) == ["alice: I lean mismatch"]
    assert len(await comments(desk, "admin", item)) == 3
    # Resolved, it is blind no more: everyone reads the thread.
    assert (await desk.decide("carol", item, MISMATCH)).status_code == 201
    assert len(await comments(desk, "bob", item)) == 3


async def test_a_double_review_hides_the_first_persons_comments_from_the_second(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    settings = desk_settings(unconfigured_settings, review_double_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        desk = await staffed(api)
        item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
        await desk.post("alice", f"/v1/queue/{item}/comments", {"body": "faithful, clearly"})
        assert (await desk.decide("alice", item, FAITHFUL)).status_code == 201
        await desk.post("bob", f"/v1/queue/{item}/comments", {"body": "reading it"})
        assert await comments(desk, "bob", item) == ["bob: reading it"]
        assert await comments(desk, "alice", item) == ["alice: faithful, clearly"]
        assert len(await comments(desk, "admin", item)) == 2
        assert (await desk.decide("bob", item, FAITHFUL)).status_code == 201
        assert len(await comments(desk, "bob", item)) == 2


# ---- The page -----------------------------------------------------------------------------


@asynccontextmanager
async def signed_in(desk: Desk, who: str) -> AsyncIterator[httpx2.AsyncClient]:
    """A browser of its own (its own cookies), signed in to /review as `who`."""
    transport = httpx2.ASGITransport(app=desk.api.app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
        form = await client.get("/review/sign-in")
        body = {"key": desk.keys[who], "csrf_token": csrf_of(form), "next": "/review"}
        assert (await client.post("/review/sign-in", data=body)).status_code == 303
        yield client


def csrf_of(page: httpx2.Response) -> str:
    found = TOKEN.search(page.text)
    assert found, page.text
    return found.group(1)


async def test_the_page_times_from_opening_and_posts_comments_and_assignment(
    desk: Desk, moved_clock: MovableClock
) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    async with signed_in(desk, "alice") as alice:
        page = await alice.get(f"/review/items/{item}")
        assert page.status_code == 200 and 'id="comment-form"' in page.text
        token = csrf_of(page)
        moved_clock.advance(75)
        # A comment needs the page's token, like every form.
        refused = await alice.post(f"/review/items/{item}/comment", data={"body": "x"})
        assert refused.status_code == 403
        posted = await alice.post(
            f"/review/items/{item}/comment", data={"body": "<b>why</b>", "csrf_token": token}
        )
        assert posted.status_code == 303
        taken = await alice.post(
            f"/review/items/{item}/assign", data={"assignee": "alice", "csrf_token": token}
        )
        assert taken.status_code == 303
        shown = await alice.get(f"/review/items/{item}?done=commented")
        assert "&lt;b&gt;why&lt;/b&gt;" in shown.text and "<b>why</b>" not in shown.text
        assert "Assigned to: <strong>you</strong>" in shown.text
        queue = await alice.get("/review", params={"mine": "true", "q": "n + 1 = 1"})
        assert f'id="row-{item}"' in queue.text and "assigned to you" in queue.text
        decided = await alice.post(
            f"/review/items/{item}/decision", data={"decision": "faithful", "csrf_token": token}
        )
        assert decided.status_code == 303
    assert 74 <= (await stats_of(desk, "alice"))["median_seconds"] <= 80
    assert await comments(desk, "bob", item) == ["alice: <b>why</b>"]


async def test_the_orm_refuses_to_change_or_delete_a_comment(desk: Desk) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    await desk.post("alice", f"/v1/queue/{item}/comments", {"body": "kept"})
    async with desk.api.runtime.sessions() as session:
        row = (await session.execute(select(Comment))).scalar_one()
        row.body = "rewritten"
        with pytest.raises(ThreadRowIsAppendOnly):
            await session.flush()
        await session.rollback()
        row = (await session.execute(select(Comment))).scalar_one()
        await session.delete(row)
        with pytest.raises(ThreadRowIsAppendOnly):
            await session.flush()
        await session.rollback()
    assert await comments(desk, "alice", item) == ["alice: kept"]


async def test_a_stored_comment_is_never_replaced_or_truncated(desk: Desk) -> None:
    item = (await desk.item_of(await desk.submit(1, "needs_review")))["id"]
    await desk.post("alice", f"/v1/queue/{item}/comments", {"body": "kept"})
    async with desk.api.runtime.sessions() as session:
        postgres = session.get_bind().dialect.name == "postgresql"
        statement = (
            "TRUNCATE comments"
            if postgres
            else "INSERT OR REPLACE INTO comments (id, queue_item_id, body, actor, actor_role, "
            "created_at) SELECT id, queue_item_id, 'rewritten', actor, actor_role, created_at "
            "FROM comments"
        )
        with pytest.raises(DBAPIError, match="append-only"):
            await session.execute(text(statement))
        await session.rollback()
    assert await comments(desk, "alice", item) == ["alice: kept"]
