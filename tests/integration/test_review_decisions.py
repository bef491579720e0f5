"""The review state machine over HTTP and through the service: defects and the 422s of a
decision, `unsure`, undo inside and after its window, double review (awaiting_second,
disputed, an admin's adjudication, the same person twice refused), `blind` and
`claimed_at` on each row, and a trail that only ever grows."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError
from app.models import Decision
from app.models.api_key import AccessRole
from app.models.decision import DEFECTS
from app.review_queue import service
from app.review_queue.service import ReviewRules
from app.settings import Settings
from app.vocabulary import DecisionValue, QueueStatus
from tests.support.in_process_api import StartApi
from tests.support.review_queue import Desk, desk_settings, error_code, open_desk, staffed

ALICE = Principal("alice", AccessRole.REVIEWER)


@pytest.fixture
async def desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    settings = desk_settings(unconfigured_settings, audit_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


@pytest.fixture
async def double_desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    """Every new item needs two people's decisions."""
    settings = desk_settings(unconfigured_settings, review_double_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


async def new_item(desk: Desk, n: int, outcome: str = "needs_review") -> int:
    item_id: int = (await desk.item_of(await desk.submit(n, outcome)))["id"]
    return item_id


async def decision_rows(desk: Desk) -> list[dict[str, Any]]:
    """Every stored decision, every column, in id order."""
    columns = [c.key for c in Decision.__table__.columns]
    async with desk.api.runtime.sessions() as session:
        rows = (await session.execute(select(Decision).order_by(Decision.id))).scalars()
        return [{c: getattr(row, c) for c in columns} for row in rows]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"decision": "mismatch", "defects": ["wrong_bound"]}, "unknown_defect"),
        ({"decision": "mismatch", "note": "x", "defects": ["vacuous", "nope"]}, "unknown_defect"),
        ({"decision": "mismatch"}, "note_or_defects_required"),
        ({"decision": "mismatch", "note": "  \n "}, "note_or_defects_required"),
        ({"decision": "unsure"}, "note_required"),
        ({"decision": "unsure", "note": "   "}, "note_required"),
        ({"decision": "faithful", "defects": ["vacuous"]}, "defects_need_mismatch"),
    ],
)
async def test_a_refused_decision_says_why_and_changes_nothing(
    desk: Desk, body: dict[str, Any], code: str
) -> None:
    item_id = await new_item(desk, 1)
    response = await desk.decide("alice", item_id, body)
    assert error_code(response, 422) == code
    if code == "unknown_defect":
        error = response.json()["error"]
        assert error["allowed"] == list(DEFECTS)
        assert all(d in error["message"] for d in DEFECTS)
    item = await desk.item(item_id)
    assert (item["status"], item["claimed_by"], item["trail"]) == ("claimed", "alice", [])


async def test_a_mismatch_names_its_defects_once_each_in_vocabulary_order(desk: Desk) -> None:
    item_id = await new_item(desk, 1)
    defects = ["wrong_quantifier", "dropped_hypothesis", "wrong_quantifier"]
    response = await desk.decide("alice", item_id, {"decision": "mismatch", "defects": defects})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["defects"] == ["dropped_hypothesis", "wrong_quantifier"]
    assert (body["note"], body["item_status"]) == ("", "resolved")
    item = await desk.item(item_id)
    assert item["final_decision"] == "mismatch"
    too_many = {"decision": "mismatch", "defects": ["other"] * (len(DEFECTS) + 1)}
    other = await new_item(desk, 2)
    assert error_code(await desk.decide("alice", other, too_many), 422) == "validation_error"


async def test_unsure_records_the_doubt_and_gives_the_item_back(desk: Desk) -> None:
    item_id = await new_item(desk, 1)
    doubt = {"decision": "unsure", "note": "is ℕ meant to include 0?", "defects": ["wrong_type"]}
    response = await desk.decide("alice", item_id, doubt)
    assert response.status_code == 201, response.text
    assert (response.json()["decision"], response.json()["item_status"]) == ("unsure", "open")
    item = await desk.item(item_id)
    assert (item["status"], item["claimed_by"], item["final_decision"]) == ("open", None, None)
    screening = await desk.get("bot", f"/v1/screenings/{item['screening_id']}")
    assert screening.json()["final_decision"] is None  # a doubt resolves nothing
    settled = await desk.decide("bob", item_id, {"decision": "faithful"})
    assert settled.status_code == 201, settled.text
    trail = [(r["actor"], r["decision"]) for r in (await desk.item(item_id))["trail"]]
    assert trail == [("alice", "unsure"), ("bob", "faithful")]


async def test_undo_inside_the_window_withdraws_and_gives_the_item_back(desk: Desk) -> None:
    item_id = await new_item(desk, 1)
    first = await desk.decide("alice", item_id, {"decision": "faithful"})
    assert first.status_code == 201, first.text
    assert error_code(await desk.post("bob", f"/v1/queue/{item_id}/undo"), 409) == (
        "nothing_to_undo"
    )
    undone = await desk.post("alice", f"/v1/queue/{item_id}/undo")
    assert undone.status_code == 201, undone.text
    row = undone.json()
    assert (row["kind"], row["decision"], row["withdraws_id"]) == (
        "withdrawal",
        None,
        first.json()["id"],
    )
    assert row["item_status"] == "claimed"
    item = await desk.item(item_id)
    assert (item["status"], item["claimed_by"], item["final_decision"]) == (
        "claimed",
        "alice",
        None,
    )
    assert error_code(await desk.post("alice", f"/v1/queue/{item_id}/undo"), 409) == (
        "nothing_to_undo"
    )
    # Still hers: she decides again without claiming.
    again = await desk.post(
        "alice", f"/v1/queue/{item_id}/decision", {"decision": "mismatch", "note": "n ≥ 1"}
    )
    assert again.status_code == 201, again.text
    assert (await desk.item(item_id))["final_decision"] == "mismatch"
    exported = await export_of(desk, "admin")
    assert [(x["decision"], x["withdrawn"], x["superseded"]) for x in exported] == [
        ("faithful", True, True),
        ("mismatch", False, False),
    ]


async def test_undo_after_the_window_is_refused(desk: Desk) -> None:
    item_id = await new_item(desk, 1)
    t0 = utcnow()
    rules = ReviewRules(undo_seconds=120)
    async with desk.api.runtime.sessions() as session:
        await service.claim(session, ALICE, item_id, claim_seconds=600, now=t0)
        await service.decide(session, ALICE, item_id, DecisionValue.FAITHFUL, now=t0)
        for late in (120, 121, 3600):
            with pytest.raises(AppError) as refused:
                await service.undo(
                    session, ALICE, item_id, rules=rules, now=t0 + timedelta(seconds=late)
                )
            assert (refused.value.status_code, refused.value.code) == (409, "undo_window_passed")
            assert "FAITHSCREEN_REVIEW_UNDO_SECONDS" in refused.value.message
        undone = await service.undo(
            session, ALICE, item_id, rules=rules, now=t0 + timedelta(seconds=119)
        )
        assert (undone.status, undone.row.kind) == (QueueStatus.CLAIMED, "withdrawal")
        await session.commit()


async def test_over_http_a_zero_window_refuses_every_undo(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    async with open_desk(start_api, unconfigured_settings, review_undo_seconds=0) as desk:
        item_id = await new_item(desk, 1)
        assert (await desk.decide("alice", item_id, {"decision": "faithful"})).status_code == 201
        late = await desk.post("alice", f"/v1/queue/{item_id}/undo")
        assert error_code(late, 409) == "undo_window_passed"
        assert (await desk.item(item_id))["status"] == "resolved"


async def test_undo_is_refused_once_someone_else_took_the_item(desk: Desk) -> None:
    item_id = await new_item(desk, 1)
    doubt = {"decision": "unsure", "note": "cannot tell"}
    assert (await desk.decide("alice", item_id, doubt)).status_code == 201
    assert (await desk.post("bob", f"/v1/queue/{item_id}/claim")).status_code == 200
    taken = await desk.post("alice", f"/v1/queue/{item_id}/undo")
    assert error_code(taken, 409) == "claimed_by_other"


async def test_a_double_review_needs_two_people_who_agree(double_desk: Desk) -> None:
    desk = double_desk
    item_id = await new_item(desk, 1)
    assert (await desk.item(item_id))["double_review"] is True
    first = await desk.decide("alice", item_id, {"decision": "faithful"})
    assert first.status_code == 201 and first.json()["item_status"] == "awaiting_second"
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"], item["claimed_by"]) == (
        "awaiting_second",
        None,
        None,
    )
    waiting = await desk.get("alice", "/v1/queue", status="awaiting_second")
    assert [i["id"] for i in waiting.json()["items"]] == [item_id]
    assert (await desk.get("alice", "/v1/queue", status="resolved")).json()["items"] == []
    # The same person again: refused at the claim and at the decision.
    assert error_code(await desk.post("alice", f"/v1/queue/{item_id}/claim"), 409) == (
        "needs_another_reviewer"
    )
    again = await desk.post("alice", f"/v1/queue/{item_id}/decision", {"decision": "faithful"})
    assert error_code(again, 409) == "not_claimed"
    claimed = await desk.post("bob", f"/v1/queue/{item_id}/claim")
    assert claimed.status_code == 200, claimed.text
    assert claimed.json()["status"] == "awaiting_second"
    second = await desk.post("bob", f"/v1/queue/{item_id}/decision", {"decision": "faithful"})
    assert second.status_code == 201 and second.json()["item_status"] == "resolved"
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"]) == ("resolved", "faithful")
    trail = [(r["actor"], r["kind"], r["decision"]) for r in item["trail"]]
    assert trail == [("alice", "decision", "faithful"), ("bob", "decision", "faithful")]


async def test_an_admin_who_decided_first_cannot_be_the_second_either(
    double_desk: Desk,
) -> None:
    desk = double_desk
    item_id = await new_item(desk, 1)
    assert (await desk.decide("admin", item_id, {"decision": "faithful"})).status_code == 201
    refused = await desk.post("admin", f"/v1/queue/{item_id}/claim")
    assert error_code(refused, 409) == "needs_another_reviewer"


async def test_a_disagreement_is_disputed_until_an_admin_adjudicates(double_desk: Desk) -> None:
    desk = double_desk
    item_id = await new_item(desk, 1)
    path = f"/v1/queue/{item_id}"
    ruling = {"decision": "mismatch", "note": "the bound is off", "defects": ["wrong_constant"]}
    early = await desk.post("admin", f"{path}/adjudicate", ruling)
    assert error_code(early, 409) == "not_disputed"
    assert (await desk.decide("alice", item_id, {"decision": "faithful"})).status_code == 201
    second = await desk.decide("bob", item_id, {"decision": "mismatch", "note": "n = 0 fails"})
    assert second.status_code == 201 and second.json()["item_status"] == "disputed"
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"]) == ("disputed", None)
    disputed = await desk.get("admin", "/v1/queue", status="disputed")
    assert [i["id"] for i in disputed.json()["items"]] == [item_id]
    for who in ("carol", "alice"):
        assert error_code(await desk.post(who, f"{path}/claim"), 409) == "disputed"
    assert error_code(await desk.post("carol", f"{path}/adjudicate", ruling), 403) == "forbidden"
    unsure = {"decision": "unsure", "note": "hm"}
    assert error_code(await desk.post("admin", f"{path}/adjudicate", unsure), 422) == (
        "final_decision_required"
    )
    bare = {"decision": "mismatch"}
    assert error_code(await desk.post("admin", f"{path}/adjudicate", bare), 422) == (
        "note_or_defects_required"
    )
    settled = await desk.post("admin", f"{path}/adjudicate", ruling)
    assert settled.status_code == 201, settled.text
    body = settled.json()
    assert (body["kind"], body["item_status"], body["defects"]) == (
        "adjudication",
        "resolved",
        ["wrong_constant"],
    )
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"]) == ("resolved", "mismatch")
    assert error_code(await desk.post("admin", f"{path}/adjudicate", ruling), 409) == (
        "not_disputed"
    )


async def test_each_row_records_blind_and_when_the_claim_began(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    async with open_desk(start_api, unconfigured_settings, audit_rate=1.0) as desk:
        audit = await new_item(desk, 1, "passed")
        review = await new_item(desk, 2, "needs_review")
        by_admin = await new_item(desk, 3, "flagged")
        claimed = await desk.post("alice", f"/v1/queue/{audit}/claim")
        began = claimed.json()["updated_at"]
        extended = await desk.post("alice", f"/v1/queue/{audit}/claim")  # keeps its start
        assert extended.status_code == 200
        rows = [
            (await desk.decide(who, item_id, {"decision": "faithful"})).json()
            for who, item_id in (("alice", audit), ("alice", review), ("admin", by_admin))
        ]
        assert [row["blind"] for row in rows] == [True, False, False]
        assert rows[0]["claimed_at"] == began
        assert all(row["claimed_at"] <= row["created_at"] for row in rows)


async def test_with_blind_review_off_no_decision_is_blind(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    updates = {"audit_rate": 1.0, "review_blind": "off"}
    async with open_desk(start_api, unconfigured_settings, **updates) as desk:
        audit = await new_item(desk, 1, "passed")
        row = (await desk.decide("alice", audit, {"decision": "faithful"})).json()
        assert row["blind"] is False


async def test_nothing_in_decisions_is_ever_updated_or_deleted(double_desk: Desk) -> None:
    """A whole life of an item -- unsure, a first decision undone and made again, a
    dispute, an adjudication, a reopen, two more decisions -- and after every step the
    stored rows are the rows before it, unchanged, and then the new one."""
    desk = double_desk
    item_id = await new_item(desk, 1)
    path = f"/v1/queue/{item_id}"
    steps: list[tuple[str, str, dict[str, Any] | None]] = [
        ("alice", "claim", None),
        ("alice", "decision", {"decision": "unsure", "note": "hm"}),
        ("alice", "claim", None),
        ("alice", "decision", {"decision": "faithful"}),
        ("alice", "undo", None),
        ("alice", "decision", {"decision": "faithful", "note": "checked again"}),
        ("bob", "claim", None),
        ("bob", "decision", {"decision": "mismatch", "defects": ["vacuous"]}),
        ("admin", "adjudicate", {"decision": "faithful", "note": "not vacuous"}),
        ("admin", "reopen", {"note": "second look"}),
        ("carol", "claim", None),
        ("carol", "decision", {"decision": "faithful"}),
        ("bob", "claim", None),
        ("bob", "decision", {"decision": "faithful"}),
    ]
    before = await decision_rows(desk)
    assert before == []
    for who, action, body in steps:
        response = await desk.post(who, f"{path}/{action}", body)
        assert response.is_success, (who, action, response.text)
        after = await decision_rows(desk)
        assert after[: len(before)] == before, (who, action)
        assert len(after) == len(before) + (action != "claim"), (who, action)
        before = after
    kinds = [row["kind"] for row in before]
    assert kinds == [
        "decision", "decision", "withdrawal", "decision", "decision", "adjudication",
        "reopen", "decision", "decision",
    ]  # fmt: skip
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"]) == ("resolved", "faithful")


async def export_of(desk: Desk, who: str) -> list[dict[str, Any]]:
    response = await desk.get(who, "/v1/decisions/export")
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


async def test_a_reviewer_export_waits_for_what_the_queue_hides(desk: Desk) -> None:
    audit = await new_item(desk, 1, "passed")  # blind to reviewers until resolved
    doubt = {"decision": "unsure", "note": "cannot tell"}
    assert (await desk.decide("alice", audit, doubt)).status_code == 201
    assert await export_of(desk, "alice") == []
    (line,) = await export_of(desk, "admin")
    assert (line["decision"], line["blind"], line["outcome"]) == ("unsure", True, "passed")
    assert (await desk.decide("bob", audit, {"decision": "faithful"})).status_code == 201
    shown = await export_of(desk, "alice")
    assert [(x["reviewer"], x["decision"], x["blind"]) for x in shown] == [
        ("alice", "unsure", True),
        ("bob", "faithful", True),
    ]


async def test_a_reviewer_export_holds_no_first_decision_awaiting_a_second(
    double_desk: Desk,
) -> None:
    desk = double_desk
    item_id = await new_item(desk, 1)
    assert (await desk.decide("alice", item_id, {"decision": "faithful"})).status_code == 201
    assert await export_of(desk, "bob") == []
    assert [x["double_review"] for x in await export_of(desk, "admin")] == [True]
    assert (await desk.decide("bob", item_id, {"decision": "faithful"})).status_code == 201
    assert [x["reviewer"] for x in await export_of(desk, "bob")] == ["alice", "bob"]
