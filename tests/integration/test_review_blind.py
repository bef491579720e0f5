"""Blind audits over HTTP: until an audit item is resolved, no read path a reviewer key has
(the queue list and item, claim and release answers, GET /v1/screenings/{id} and its
listing, batch results) tells what the models said; after the decision it all appears;
admins see everything, submitters keep reading their own outcomes, a queue item never shows
the label, and the first decision of a double review stays hidden from the second person."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import update

from app.clock import utcnow
from app.models import Decision, QueueItem
from app.models.api_key import AccessRole
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import (
    JUDGE_FAITHFUL,
    REPLIES,
    bearer,
    error_code,
    make_key,
    pair,
    queue_items,
)
from tests.support.scripted_openai import contract_reply

# Texts only the models wrote: none may reach a reviewer while the item is blind.
ISSUE = "SENTINEL-ISSUE the hypothesis n < 0 was dropped"
BACK = "SENTINEL-BACK for every integer n"
FLAGGED = {
    "translator": contract_reply("MISMATCH", back_translation=BACK, issues=ISSUE),
    "judge": JUDGE_FAITHFUL,
}
SENTINELS = (ISSUE, BACK, "translator_mismatch")
# What a blind item withholds, wherever it appears in a body.
WITHHELD = {
    "outcome",
    "reasons",
    "evidence",
    "reviews",
    "back_translation",
    "rulings",
    "readings",
    "label",
    "tags",
    "final_decision",
}
BLIND_SCREENING = {"blind", "id", "external_id", "batch_id", "informal", "formal", "header"}


@dataclass
class Blind:
    api: Api
    admin: str
    alice: str
    bob: str
    bot: str

    async def get(self, key: str, path: str, **params: Any) -> Any:
        return await self.api.client.get(path, params=params, headers=bearer(key))

    async def post(self, key: str, path: str, body: Any = None) -> Any:
        return await self.api.client.post(path, json=body, headers=bearer(key))

    async def submit(self, n: int, replies: dict[str, str], **extra: Any) -> str:
        body = pair(n, "passed", **extra) | {"replies": replies}
        response = await self.post(self.bot, "/v1/screenings", body)
        assert response.status_code == 202, response.text
        screening_id: str = response.json()["id"]
        return screening_id

    async def item_of(self, screening_id: str) -> dict[str, Any]:
        items = await queue_items(self.api, self.admin)
        return next(i for i in items if i["screening_id"] == screening_id)


async def start_blind(start_api: StartApi, settings: Settings, **update: Any) -> Any:
    # Audits of every passed and flagged outcome, so all three outcomes reach the queue.
    changed = settings.model_copy(update={"auth": "on", "audit_rate": 1.0, **update})
    return start_api(changed, with_worker=False)


@pytest.fixture
async def blind(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Blind]:
    async with await start_blind(start_api, unconfigured_settings) as api:
        yield await keys(api)


async def keys(api: Api, tag: str = "") -> Blind:
    """Keys named admin, alice, bob and bot (plus `tag`: names are never reused)."""
    return Blind(
        api,
        admin=await make_key(api, AccessRole.ADMIN, f"admin{tag}"),
        alice=await make_key(api, AccessRole.REVIEWER, f"alice{tag}"),
        bob=await make_key(api, AccessRole.REVIEWER, f"bob{tag}"),
        bot=await make_key(api, AccessRole.SUBMITTER, f"bot{tag}"),
    )


def leaks(body: Any) -> list[str]:
    """Every withheld field with a value, and every sentinel text, found in `body`."""
    found: list[str] = [s for s in SENTINELS if s in json.dumps(body)]
    if isinstance(body, dict):
        for key, value in body.items():
            if key in WITHHELD and value not in (None, [], {}):
                found.append(key)
            found += leaks(value)
    elif isinstance(body, list):
        for value in body:
            found += leaks(value)
    return found


async def test_a_blind_audit_shows_a_reviewer_the_pair_only_on_every_read_path(
    blind: Blind,
) -> None:
    screening_id = await blind.submit(1, FLAGGED, label="mismatch", tags=["hard"])
    item = await blind.item_of(screening_id)
    assert (item["audit"], item["outcome"], item["blind"]) == (True, "flagged", False)
    item_id = item["id"]

    listed = next(i for i in await queue_items(blind.api, blind.alice) if i["id"] == item_id)
    assert listed["blind"] is True and listed["audit"] is True and leaks(listed) == []
    detail = (await blind.get(blind.alice, f"/v1/queue/{item_id}")).json()
    assert detail["blind"] is True and leaks(detail) == []
    assert set(detail["screening"]) == BLIND_SCREENING | {"created_at"}
    assert detail["screening"]["formal"] == pair(1, "passed")["formal"]
    # A filter must not tell what the item hides.
    assert await queue_items(blind.api, blind.alice, reason="translator_mismatch") == []
    assert await queue_items(blind.api, blind.alice, reason="translator") == []

    response = await blind.get(blind.alice, f"/v1/screenings/{screening_id}")
    assert error_code(response, 403) == "blind_item"
    assert leaks(response.json()) == []
    page = (await blind.get(blind.alice, "/v1/screenings")).json()["items"]
    row = next(s for s in page if s["id"] == screening_id)
    assert row["blind"] is True and leaks(row) == []
    flagged = (await blind.get(blind.alice, "/v1/screenings", outcome="flagged")).json()
    assert flagged["items"] == []

    claimed = await blind.post(blind.alice, f"/v1/queue/{item_id}/claim")
    assert claimed.status_code == 200 and claimed.json()["blind"] is True
    assert leaks(claimed.json()) == []
    assert leaks((await blind.get(blind.alice, f"/v1/queue/{item_id}")).json()) == []
    released = await blind.post(blind.alice, f"/v1/queue/{item_id}/release")
    assert released.status_code == 200 and leaks(released.json()) == []


async def test_batch_results_withhold_a_blind_item_from_a_reviewer(blind: Blind) -> None:
    items = [pair(2, "needs_review"), pair(3, "passed") | {"replies": FLAGGED}]
    response = await blind.post(blind.bot, "/v1/batches", {"items": items})
    assert response.status_code == 202, response.text
    results = f"/v1/batches/{response.json()['id']}/results"

    def lines(response: Any) -> list[dict[str, Any]]:
        assert response.status_code == 200, response.text
        return [json.loads(line) for line in response.text.splitlines()]

    seen = lines(await blind.get(blind.alice, results))
    assert [line["blind"] for line in seen] == [False, True]
    assert seen[0]["outcome"] == "needs_review" and leaks(seen[1]) == []
    # The submitter's pipeline and an admin read every line whole.
    for key in (blind.bot, blind.admin):
        whole = lines(await blind.get(key, results))
        assert [line["outcome"] for line in whole] == ["needs_review", "flagged"]
        assert whole[1]["reasons"] == ["translator_mismatch"] and not whole[1]["blind"]


async def test_everything_appears_once_the_blind_item_is_resolved(blind: Blind) -> None:
    screening_id = await blind.submit(4, FLAGGED, label="mismatch")
    item_id = (await blind.item_of(screening_id))["id"]
    assert (await blind.post(blind.alice, f"/v1/queue/{item_id}/claim")).status_code == 200
    decided = await blind.post(
        blind.alice, f"/v1/queue/{item_id}/decision", {"decision": "mismatch", "note": "n < 0"}
    )
    assert decided.status_code == 201, decided.text

    detail = (await blind.get(blind.bob, f"/v1/queue/{item_id}")).json()
    assert detail["blind"] is False and detail["status"] == "resolved"
    assert (detail["outcome"], detail["reasons"]) == ("flagged", ["translator_mismatch"])
    screening = detail["screening"]
    assert screening["blind"] is False and ISSUE in json.dumps(screening["reviews"])
    assert BACK in json.dumps(screening["reviews"]) and "evidence" in screening
    # The calibration label is never shown on a queue item, blind or not.
    assert "label" not in screening and "tags" not in screening
    whole = await blind.get(blind.bob, f"/v1/screenings/{screening_id}")
    assert whole.status_code == 200 and whole.json()["label"] == "mismatch"
    listed = await blind.get(blind.bob, "/v1/screenings", outcome="flagged")
    assert [s["id"] for s in listed.json()["items"]] == [screening_id]
    found = await queue_items(blind.api, blind.bob, reason="translator_mismatch")
    assert [i["id"] for i in found] == [item_id]


async def test_admins_see_a_blind_item_whole_and_submitters_their_outcomes(blind: Blind) -> None:
    screening_id = await blind.submit(5, FLAGGED, label="faithful")
    item_id = (await blind.item_of(screening_id))["id"]
    detail = (await blind.get(blind.admin, f"/v1/queue/{item_id}")).json()
    assert detail["blind"] is False and detail["outcome"] == "flagged"
    assert ISSUE in json.dumps(detail["screening"]["reviews"])
    assert "label" not in detail["screening"]
    found = await queue_items(blind.api, blind.admin, reason="translator_mismatch")
    assert [i["id"] for i in found] == [item_id]
    for key in (blind.admin, blind.bot):
        whole = await blind.get(key, f"/v1/screenings/{screening_id}")
        assert whole.status_code == 200 and whole.json()["outcome"] == "flagged"
        assert whole.json()["blind"] is False
        flagged = (await blind.get(key, "/v1/screenings", outcome="flagged")).json()["items"]
        assert [s["id"] for s in flagged] == [screening_id]


async def test_needs_review_is_blind_only_under_all_and_off_blinds_nothing(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    async with await start_blind(start_api, unconfigured_settings) as api:
        default = await keys(api)
        screening_id = await default.submit(6, REPLIES["needs_review"])
        item_id = (await default.item_of(screening_id))["id"]
        seen = (await default.get(default.alice, f"/v1/queue/{item_id}")).json()
        assert seen["blind"] is False and seen["reasons"] == ["translator_missing"]

    async with await start_blind(start_api, unconfigured_settings, review_blind="all") as api:
        every = await keys(api, "-all")
        review_id = await every.submit(7, REPLIES["needs_review"])
        audit_id = await every.submit(8, FLAGGED)
        listed = {i["screening_id"]: i for i in await queue_items(api, every.alice)}
        for screening_id in (review_id, audit_id):
            row = listed[screening_id]
            # Under `all` the audit flag would tell needs_review from passed or flagged.
            assert row["blind"] is True and row["audit"] is None and leaks(row) == []
            response = await every.get(every.alice, f"/v1/screenings/{screening_id}")
            assert error_code(response, 403) == "blind_item"
        # Every unresolved item is blind here (screening 6's of the first run too).
        assert await queue_items(api, every.alice, audit="true") == []
        assert await queue_items(api, every.alice, audit="false") == []
        assert len(await queue_items(api, every.admin, audit="false")) == 2

    async with await start_blind(start_api, unconfigured_settings, review_blind="off") as api:
        off = await keys(api, "-off")
        screening_id = await off.submit(9, FLAGGED)
        row = await off.item_of(screening_id)
        assert row == next(i for i in await queue_items(api, off.alice) if i["id"] == row["id"])
        assert row["blind"] is False and row["outcome"] == "flagged"
        response = await off.get(off.alice, f"/v1/screenings/{screening_id}")
        assert response.status_code == 200 and response.json()["outcome"] == "flagged"


async def test_a_double_reviews_first_decision_is_hidden_until_both_are_in(blind: Blind) -> None:
    screening_id = await blind.submit(10, REPLIES["needs_review"])
    item_id = (await blind.item_of(screening_id))["id"]
    # The state after alice's first decision, written as the state machine leaves it.
    async with blind.api.runtime.sessions() as session:
        row = Decision(
            queue_item_id=item_id,
            screening_id=screening_id,
            kind="decision",
            decision="mismatch",
            note="SENTINEL-FIRST",
            defects=["dropped_hypothesis"],
            actor="alice",
            actor_role="reviewer",
            created_at=utcnow(),
        )
        session.add(row)
        await session.execute(
            update(QueueItem)
            .where(QueueItem.id == item_id)
            .values(double_review=True, status="awaiting_second")
        )
        await session.commit()

    async def trail(key: str) -> list[dict[str, Any]]:
        body = (await blind.get(key, f"/v1/queue/{item_id}")).json()
        assert body["status"] in ("awaiting_second", "disputed") and body["double_review"]
        rows: list[dict[str, Any]] = body["trail"]
        return rows

    assert await trail(blind.bob) == []
    assert "SENTINEL-FIRST" not in json.dumps(await queue_items(blind.api, blind.bob))
    # The first person sees their own decision, an admin sees it too.
    for key in (blind.alice, blind.admin):
        [first] = await trail(key)
        assert (first["decision"], first["defects"]) == ("mismatch", ["dropped_hypothesis"])
    async with blind.api.runtime.sessions() as session:
        await session.execute(
            update(QueueItem).where(QueueItem.id == item_id).values(status="disputed")
        )
        await session.commit()
    assert [r["note"] for r in await trail(blind.bob)] == ["SENTINEL-FIRST"]


async def test_the_state_machines_double_review_hides_the_first_decision_until_both(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    async with await start_blind(start_api, unconfigured_settings, review_double_rate=1.0) as api:
        blind = await keys(api)
        screening_id = await blind.submit(11, FLAGGED)
        item_id = (await blind.item_of(screening_id))["id"]
        path = f"/v1/queue/{item_id}"
        assert (await blind.post(blind.alice, f"{path}/claim")).status_code == 200
        first = {"decision": "mismatch", "note": "SENTINEL-FIRST", "defects": ["vacuous"]}
        decided = await blind.post(blind.alice, f"{path}/decision", first)
        assert decided.status_code == 201, decided.text
        assert decided.json()["item_status"] == "awaiting_second" and decided.json()["blind"]

        seen = (await blind.get(blind.bob, path)).json()
        assert (seen["status"], seen["blind"], seen["trail"]) == ("awaiting_second", True, [])
        assert leaks(seen) == [] and "SENTINEL-FIRST" not in json.dumps(seen)
        listed = await queue_items(api, blind.bob)
        assert "SENTINEL-FIRST" not in json.dumps(listed) and leaks(listed) == []
        assert [r["note"] for r in (await blind.get(blind.alice, path)).json()["trail"]] == [
            "SENTINEL-FIRST"
        ]
        assert [r["note"] for r in (await blind.get(blind.admin, path)).json()["trail"]] == [
            "SENTINEL-FIRST"
        ]
        # Nor do a person's counts tell it: alice's decision counts once both are in.
        assert (await blind.get(blind.bob, "/v1/review/stats")).json()["people"] == []
        [counted] = (await blind.get(blind.admin, "/v1/review/stats")).json()["people"]
        assert (counted["actor"], counted["mismatch"]) == ("alice", 1)

        assert (await blind.post(blind.bob, f"{path}/claim")).status_code == 200
        second = {"decision": "mismatch", "note": "agreed", "defects": ["vacuous"]}
        assert (await blind.post(blind.bob, f"{path}/decision", second)).status_code == 201
        done = (await blind.get(blind.bob, path)).json()
        assert (done["status"], done["blind"], done["outcome"]) == ("resolved", False, "flagged")
        assert [(r["actor"], r["blind"]) for r in done["trail"]] == [
            ("alice", True),
            ("bob", True),
        ]
        stats = (await blind.get(blind.bob, "/v1/review/stats")).json()["people"]
        assert [(p["actor"], p["mismatch"], p["double_reviewed"]) for p in stats] == [
            ("alice", 1, 1),
            ("bob", 1, 1),
        ]
        summary = (await blind.get(blind.bob, "/v1/reports/summary")).json()
        assert summary["reviewer_agreement"] == {
            "double_reviewed": 1,
            "agreed": 1,
            "agreement": None,
            "kappa": None,
        }
        assert summary["defects"]["by_outcome"] == {"flagged": {"vacuous": 1}}


async def test_a_screening_that_joined_a_blind_item_is_withheld_too(blind: Blind) -> None:
    opening = await blind.submit(12, FLAGGED)
    joined = await blind.submit(12, FLAGGED)
    item = await blind.item_of(opening)
    assert item["screening_ids"] == [opening, joined]
    for screening_id in (opening, joined):
        response = await blind.get(blind.alice, f"/v1/screenings/{screening_id}")
        assert error_code(response, 403) == "blind_item"
    page = (await blind.get(blind.alice, "/v1/screenings")).json()["items"]
    assert {s["id"] for s in page if s["blind"]} == {opening, joined} and leaks(page) == []

    path = f"/v1/queue/{item['id']}"
    assert (await blind.post(blind.alice, f"{path}/claim")).status_code == 200
    body = {"decision": "faithful"}
    assert (await blind.post(blind.alice, f"{path}/decision", body)).status_code == 201
    for screening_id in (opening, joined):
        response = await blind.get(blind.alice, f"/v1/screenings/{screening_id}")
        assert response.status_code == 200 and response.json()["final_decision"] == "faithful"


async def test_counts_leave_a_blind_item_out_for_a_reviewer(blind: Blind) -> None:
    items = [pair(13, "needs_review"), pair(14, "passed", label="mismatch") | {"replies": FLAGGED}]
    response = await blind.post(blind.bot, "/v1/batches", {"items": items})
    assert response.status_code == 202, response.text
    batch_id = response.json()["id"]

    async def progress(key: str) -> dict[str, Any]:
        got = await blind.get(key, f"/v1/batches/{batch_id}")
        assert got.status_code == 200, got.text
        body: dict[str, Any] = got.json()
        return body

    seen = await progress(blind.alice)
    assert (seen["done"], seen["blind"]) == (2, 1)
    assert seen["outcomes"] == {"passed": 0, "flagged": 0, "needs_review": 1}
    # Only the needs_review item's reviews: its translator reply was unreadable.
    assert seen["parse_statuses"]["translator"]["ok"] == 0
    whole = await progress(blind.bot)
    assert whole["blind"] == 0 and whole["outcomes"]["flagged"] == 1
    assert whole["parse_statuses"]["translator"]["ok"] == 1

    report = (await blind.get(blind.alice, "/v1/reports/summary", batch_id=batch_id)).json()
    assert report["screenings"] == 1 and report["outcomes"]["flagged"] == 0
    assert "translator_mismatch" not in report["reasons"]
    admin = (await blind.get(blind.admin, "/v1/reports/summary", batch_id=batch_id)).json()
    assert admin["screenings"] == 2 and admin["outcomes"]["flagged"] == 1

    calibration = f"/v1/batches/{batch_id}/calibration"
    assert error_code(await blind.get(blind.alice, calibration), 403) == "blind_item"
    compared = await blind.get(blind.alice, "/v1/calibrations/compare", a=batch_id, b=batch_id)
    assert error_code(compared, 403) == "blind_item"
    assert (await blind.get(blind.admin, calibration)).status_code == 200

    results = await blind.get(blind.bot, f"/v1/batches/{batch_id}/results")
    audited = json.loads(results.text.splitlines()[1])["id"]
    item = await blind.item_of(audited)
    assert (await blind.post(blind.alice, f"/v1/queue/{item['id']}/claim")).status_code == 200
    decision = {"decision": "mismatch", "defects": ["dropped_hypothesis"]}
    decided = await blind.post(blind.alice, f"/v1/queue/{item['id']}/decision", decision)
    assert decided.status_code == 201, decided.text
    after = await progress(blind.alice)
    assert after["blind"] == 0 and after["outcomes"]["flagged"] == 1
    assert (await blind.get(blind.alice, calibration)).status_code == 200
