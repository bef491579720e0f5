"""The review queue over HTTP: listing with filters and paging, an item with everything a
reviewer needs, the decision trail (decide, 409 on a second decision, reopen, decide again),
`final_decision` following it, and the export of decisions as JSONL."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import update

from app.models import QueueItem
from app.models.api_key import AccessRole
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import bearer, error_code, make_key, queue_items, submit


@dataclass
class Review:
    api: Api
    admin: str
    alice: str
    bob: str
    submitter: str

    async def post(self, key: str, path: str, body: Any = None) -> Any:
        return await self.api.client.post(path, json=body, headers=bearer(key))

    async def get(self, key: str, path: str, **params: Any) -> Any:
        return await self.api.client.get(path, params=params, headers=bearer(key))


@pytest.fixture
async def review(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Review]:
    # Audits of every passed and flagged outcome, so all three outcomes reach the queue.
    settings = unconfigured_settings.model_copy(update={"auth": "on", "audit_rate": 1.0})
    async with start_api(settings, with_worker=False) as api:
        yield Review(
            api,
            admin=await make_key(api, AccessRole.ADMIN, "admin"),
            alice=await make_key(api, AccessRole.REVIEWER, "alice"),
            bob=await make_key(api, AccessRole.REVIEWER, "bob"),
            submitter=await make_key(api, AccessRole.SUBMITTER, "bot"),
        )


async def seed(review: Review, outcomes: list[str]) -> list[int]:
    """Submit pairs ending in `outcomes`; returns their queue item ids, in that order."""
    ids = [await submit(review.api, review.submitter, n, o) for n, o in enumerate(outcomes)]
    items = {i["screening_id"]: i["id"] for i in await queue_items(review.api, review.alice)}
    return [items[screening_id] for screening_id in ids]


async def test_the_listing_is_oldest_first_with_filters_and_cursor_paging(review: Review) -> None:
    ids = await seed(review, ["needs_review", "passed", "flagged", "needs_review", "passed"])
    page = (await review.get(review.alice, "/v1/queue", limit=2)).json()
    assert [i["id"] for i in page["items"]] == ids[:2] and page["next_cursor"]
    assert [i["id"] for i in await queue_items(review.api, review.alice, limit=2)] == ids
    audits = await queue_items(review.api, review.alice, audit="true")
    assert [i["id"] for i in audits] == [ids[1], ids[2], ids[4]]
    reviews = await queue_items(review.api, review.alice, audit="false")
    assert [i["id"] for i in reviews] == [ids[0], ids[3]]
    exact = await queue_items(review.api, review.alice, reason="translator_missing")
    assert [i["id"] for i in exact] == [ids[0], ids[3]]
    assert await queue_items(review.api, review.alice, reason="translator_miss") == []
    # A reason with a literal "_" must not match as a LIKE wildcard would.
    assert await queue_items(review.api, review.alice, reason="translator%") == []
    # The flagged audit is blind to a reviewer, whose reason filter never matches it.
    mismatch = await queue_items(review.api, review.admin, reason="translator_mismatch")
    assert [i["id"] for i in mismatch] == [ids[2]]
    first = page["items"][0]
    assert (first["status"], first["outcome"], first["audit"]) == ("open", "needs_review", False)
    assert first["reasons"] == ["translator_missing"] and first["external_id"] == "pair-0"


async def test_the_reason_filter_matches_the_kind_before_a_colon(review: Review) -> None:
    ids = await seed(review, ["needs_review"])
    # Evidence reasons come in both shapes; set them on the stored item directly.
    reasons = ["evidence_review", "evidence_review:contract_text_in_input"]
    async with review.api.runtime.sessions() as session:
        await session.execute(update(QueueItem).values(reasons=reasons))
        await session.commit()
    for reason in reasons:
        found = await queue_items(review.api, review.alice, reason=reason)
        assert [i["id"] for i in found] == ids, reason
    assert await queue_items(review.api, review.alice, reason="evidence") == []
    assert await queue_items(review.api, review.alice, reason="contract_text_in_input") == []


async def test_status_and_batch_filters(review: Review) -> None:
    ids = await seed(review, ["needs_review", "needs_review", "needs_review"])
    assert (await review.post(review.alice, f"/v1/queue/{ids[1]}/claim")).status_code == 200
    await review.post(review.bob, f"/v1/queue/{ids[2]}/claim")
    decided = await review.post(
        review.bob, f"/v1/queue/{ids[2]}/decision", {"decision": "faithful"}
    )
    assert decided.status_code == 201, decided.text
    by_status = {
        status: [i["id"] for i in await queue_items(review.api, review.alice, status=status)]
        for status in ("open", "claimed", "resolved")
    }
    assert by_status == {"open": [ids[0]], "claimed": [ids[1]], "resolved": [ids[2]]}
    assert await queue_items(review.api, review.alice, batch_id="no-such-batch") == []
    bad = await review.get(review.alice, "/v1/queue", status="lost")
    assert error_code(bad, 422) == "validation_error"
    assert error_code(await review.get(review.alice, "/v1/queue", cursor="x"), 422)


async def test_an_item_holds_everything_a_reviewer_needs(review: Review) -> None:
    (item_id,) = await seed(review, ["needs_review"])
    body = (await review.get(review.alice, f"/v1/queue/{item_id}")).json()
    screening = body["screening"]
    assert screening["formal"].startswith("theorem add_comm_0 (n : ℕ)")
    assert screening["informal"] and "header" in screening and "evidence" in screening
    assert body["reasons"] == screening["reasons"] == ["translator_missing"]
    translator = next(r for r in screening["reviews"] if r["role"] == "translator")
    assert translator["raw_response"] == "no verdict in this reply"
    assert translator["parse_status"] == "missing"
    assert body["trail"] == [] and body["claimed_by"] is None
    assert error_code(await review.get(review.alice, "/v1/queue/999999"), 404) == "not_found"
    assert error_code(await review.get(review.alice, "/v1/queue/0"), 422)
    assert error_code(await review.get(review.alice, f"/v1/queue/{2**40}"), 422)


async def test_the_decision_trail(review: Review) -> None:
    (item_id,) = await seed(review, ["needs_review"])
    item = f"/v1/queue/{item_id}"
    assert (
        error_code(
            await review.post(review.alice, f"{item}/decision", {"decision": "faithful"}), 409
        )
        == "not_claimed"
    )
    await review.post(review.alice, f"{item}/claim")
    assert (
        error_code(await review.post(review.bob, f"{item}/decision", {"decision": "faithful"}), 409)
        == "claimed_by_other"
    )
    first = await review.post(
        review.alice, f"{item}/decision", {"decision": "mismatch", "note": "n must be > 0"}
    )
    assert first.status_code == 201, first.text
    assert await final_decision(review, item_id) == "mismatch"
    again = await review.post(review.alice, f"{item}/decision", {"decision": "faithful"})
    assert error_code(again, 409) == "already_resolved"
    assert error_code(await review.post(review.bob, f"{item}/claim"), 409) == "already_resolved"
    assert (
        error_code(await review.post(review.alice, f"{item}/reopen", {"note": "x"}), 403)
        == "forbidden"
    )

    reopened = await review.post(review.admin, f"{item}/reopen", {"note": "second opinion"})
    assert reopened.status_code == 201, reopened.text
    assert await final_decision(review, item_id) is None
    assert error_code(await review.post(review.admin, f"{item}/reopen"), 409) == "not_resolved"
    await review.post(review.bob, f"{item}/claim")
    second = await review.post(review.bob, f"{item}/decision", {"decision": "faithful"})
    assert second.status_code == 201, second.text

    body = (await review.get(review.alice, item)).json()
    trail = [
        (r["kind"], r["decision"], r["actor"], r["actor_role"], r["note"]) for r in body["trail"]
    ]
    assert trail == [
        ("decision", "mismatch", "alice", "reviewer", "n must be > 0"),
        ("reopen", None, "admin", "admin", "second opinion"),
        ("decision", "faithful", "bob", "reviewer", ""),
    ]
    times = [r["created_at"] for r in body["trail"]]
    assert times == sorted(times)
    assert (body["status"], body["final_decision"]) == ("resolved", "faithful")
    assert body["screening"]["outcome"] == "needs_review"  # the outcome is never changed
    assert await final_decision(review, item_id) == "faithful"


async def final_decision(review: Review, item_id: int) -> str | None:
    body = (await review.get(review.alice, f"/v1/queue/{item_id}")).json()
    decision: str | None = body["final_decision"]
    screening = await review.get(review.submitter, f"/v1/screenings/{body['screening_id']}")
    assert screening.json()["final_decision"] == decision
    return decision


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"decision": "unclear"},
        {"decision": "faithful", "extra": 1},
        {"decision": "faithful", "note": "a\u0000b"},
    ],
)
async def test_a_bad_decision_body_is_refused_and_changes_nothing(
    review: Review, body: Any
) -> None:
    (item_id,) = await seed(review, ["needs_review"])
    await review.post(review.alice, f"/v1/queue/{item_id}/claim")
    response = await review.post(review.alice, f"/v1/queue/{item_id}/decision", body)
    assert error_code(response, 422)
    state = (await review.get(review.alice, f"/v1/queue/{item_id}")).json()
    assert (state["status"], state["trail"]) == ("claimed", [])


async def export(review: Review, key: str, **params: Any) -> list[dict[str, Any]]:
    response = await review.get(key, "/v1/decisions/export", **params)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


async def decide(review: Review, key: str, item_id: int, decision: str, note: str = "") -> None:
    await review.post(key, f"/v1/queue/{item_id}/claim")
    response = await review.post(
        key, f"/v1/queue/{item_id}/decision", {"decision": decision, "note": note}
    )
    assert response.status_code == 201, response.text


async def test_the_export_holds_every_decision_with_its_pair(review: Review) -> None:
    ids = await seed(review, ["needs_review", "passed"])
    assert await export(review, review.alice) == []
    await decide(review, review.alice, ids[0], "mismatch", "wrong bound")
    await decide(review, review.bob, ids[1], "faithful")
    await review.post(review.admin, f"/v1/queue/{ids[0]}/reopen", {"note": "check"})
    await decide(review, review.bob, ids[0], "faithful", "it is fine")

    lines = await export(review, review.alice)
    summary = [(x["queue_item_id"], x["decision"], x["reviewer"], x["superseded"]) for x in lines]
    assert summary == [
        (ids[0], "mismatch", "alice", True),
        (ids[1], "faithful", "bob", False),
        (ids[0], "faithful", "bob", False),
    ]
    first = lines[0]
    assert first["informal"] == "For every natural number n, n + 0 = 0 + n."
    assert first["formal"].startswith("theorem add_comm_0 (n : ℕ)")  # Unicode kept as is
    assert (first["header"], first["external_id"]) == ("", "pair-0")
    assert (first["outcome"], first["reasons"], first["audit"]) == (
        "needs_review",
        ["translator_missing"],
        False,
    )
    assert (first["note"], first["reviewer_role"]) == ("wrong bound", "reviewer")
    assert first["screening_id"] and first["decided_at"]
    assert (lines[1]["outcome"], lines[1]["audit"]) == ("passed", True)
    later = await export(review, review.admin, after=lines[0]["decision_id"])
    assert [x["decision_id"] for x in later] == [x["decision_id"] for x in lines[1:]]
    assert error_code(await review.get(review.submitter, "/v1/decisions/export"), 403)
