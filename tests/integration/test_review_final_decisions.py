"""What a decision may tell its author, and what they may do with it after: a blind decision
that resolved its item is final (an undo would let its author decide again knowing the
models' answer), a double review's second decision is final (an undo would let its author
switch once told whether the two agree), a decision after a reopen is not recorded blind,
and an admin who gave one of a dispute's decisions cannot adjudicate it. Over the API and
on the review page alike (issue 32, items 5 to 7)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from app.settings import Settings
from tests.integration.test_review_sessions import browser, csrf_of, sign_in
from tests.support.in_process_api import StartApi
from tests.support.review_queue import Desk, desk_settings, error_code, staffed

MISMATCH = {"decision": "mismatch", "note": "n < 0 is dropped"}
FAITHFUL = {"decision": "faithful"}


@pytest.fixture
async def desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    """Every passed and flagged screening is audited, so decided blind by reviewers."""
    settings = desk_settings(unconfigured_settings, audit_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


@pytest.fixture
async def double_desk(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Desk]:
    """Every item needs two people; needs_review items are not blind, audits are."""
    settings = desk_settings(unconfigured_settings, audit_rate=1.0, review_double_rate=1.0)
    async with start_api(settings, with_worker=False) as api:
        yield await staffed(api)


async def new_item(desk: Desk, n: int, outcome: str) -> int:
    item_id: int = (await desk.item_of(await desk.submit(n, outcome)))["id"]
    return item_id


async def undo(desk: Desk, who: str, item_id: int) -> httpx2.Response:
    return await desk.post(who, f"/v1/queue/{item_id}/undo")


# ---- Item 5: a blind decision that resolved its item is final ------------------------------


async def test_a_blind_decision_that_resolved_the_item_cannot_be_undone(desk: Desk) -> None:
    item_id = await new_item(desk, 1, "flagged")
    assert (await desk.item(item_id, "alice"))["blind"] is True
    decided = await desk.decide("alice", item_id, MISMATCH)
    assert decided.status_code == 201, decided.text
    row = decided.json()
    assert (row["blind"], row["item_status"], row["final"]) == (True, "resolved", True)
    # Now she sees the outcome; an undo would let her decide again knowing it.
    assert (await desk.item(item_id, "alice"))["outcome"] == "flagged"
    assert error_code(await undo(desk, "alice", item_id), 409) == "decision_final"
    item = await desk.item(item_id)
    assert (item["status"], item["final_decision"]) == ("resolved", "mismatch")
    assert [r["kind"] for r in item["trail"]] == ["decision"]


async def test_a_blind_unsure_is_withdrawn_and_the_item_stays_blind(desk: Desk) -> None:
    """An unsure resolves nothing, so tells nothing: undo stays open for it."""
    item_id = await new_item(desk, 2, "passed")
    doubt = await desk.decide("alice", item_id, {"decision": "unsure", "note": "ℕ or ℤ?"})
    assert doubt.status_code == 201 and doubt.json()["final"] is False
    undone = await undo(desk, "alice", item_id)
    assert undone.status_code == 201, undone.text
    seen = await desk.item(item_id, "alice")
    assert (seen["status"], seen["blind"], seen["outcome"]) == ("claimed", True, None)


async def test_a_sighted_decision_is_still_undone_inside_its_window(desk: Desk) -> None:
    needs_review = await new_item(desk, 3, "needs_review")  # not blind under `audit`
    audit = await new_item(desk, 4, "flagged")  # an admin never sees it blind
    for who, item_id in (("alice", needs_review), ("admin", audit)):
        decided = await desk.decide(who, item_id, FAITHFUL)
        assert (decided.json()["blind"], decided.json()["final"]) == (False, False)
        assert (await undo(desk, who, item_id)).status_code == 201


async def test_after_a_reopen_a_decision_is_not_recorded_blind(desk: Desk) -> None:
    """Once resolved the item was open to every reviewer: whoever decides it after a reopen
    may have seen the models' answer, so the row cannot say `blind`."""
    item_id = await new_item(desk, 5, "flagged")
    assert (await desk.decide("alice", item_id, MISMATCH)).json()["blind"] is True
    reopened = await desk.post("admin", f"/v1/queue/{item_id}/reopen", {"note": "again"})
    assert reopened.status_code == 201, reopened.text
    assert (await desk.item(item_id, "bob"))["blind"] is True  # still shown blind
    for who in ("alice", "bob"):
        again = await desk.decide(who, item_id, {"decision": "unsure", "note": "hm"})
        assert (again.status_code, again.json()["blind"]) == (201, False)


# ---- Item 6: a double review's second decision is final -------------------------------------


@pytest.mark.parametrize(("second", "status"), [(FAITHFUL, "resolved"), (MISMATCH, "disputed")])
async def test_a_second_decision_cannot_be_undone_to_switch_sides(
    double_desk: Desk, second: dict[str, Any], status: str
) -> None:
    desk = double_desk
    item_id = await new_item(desk, 6, "needs_review")
    first = await desk.decide("alice", item_id, FAITHFUL)
    assert (first.json()["item_status"], first.json()["final"]) == ("awaiting_second", False)
    decided = await desk.decide("bob", item_id, second)
    assert decided.status_code == 201, decided.text
    assert (decided.json()["item_status"], decided.json()["final"]) == (status, True)
    assert error_code(await undo(desk, "bob", item_id), 409) == "decision_final"
    item = await desk.item(item_id)
    assert item["status"] == status
    assert [(r["actor"], r["kind"]) for r in item["trail"]] == [
        ("alice", "decision"),
        ("bob", "decision"),
    ]
    if status == "disputed":  # an admin who gave neither settles it, for good
        ruling = {"decision": "faithful", "note": "the bound holds"}
        settled = await desk.post("admin", f"/v1/queue/{item_id}/adjudicate", ruling)
        assert (settled.status_code, settled.json()["final"]) == (201, True)


async def test_a_first_decision_and_a_second_unsure_are_still_undone(double_desk: Desk) -> None:
    """Neither tells its author anything: the item still awaits a second decision."""
    desk = double_desk
    item_id = await new_item(desk, 7, "passed")  # an audit: blind, double
    first = await desk.decide("alice", item_id, MISMATCH)
    assert (first.json()["blind"], first.json()["final"]) == (True, False)
    assert (await undo(desk, "alice", item_id)).status_code == 201
    assert (await desk.post("alice", f"/v1/queue/{item_id}/decision", MISMATCH)).is_success
    doubt = await desk.decide("bob", item_id, {"decision": "unsure", "note": "cannot tell"})
    assert (doubt.json()["item_status"], doubt.json()["final"]) == ("awaiting_second", False)
    assert (await undo(desk, "bob", item_id)).status_code == 201


# ---- Item 7: a party to a dispute does not adjudicate it ------------------------------------


async def dispute(desk: Desk, n: int, first: str, second: str) -> int:
    item_id = await new_item(desk, n, "needs_review")
    assert (await desk.decide(first, item_id, FAITHFUL)).status_code == 201
    decided = await desk.decide(second, item_id, MISMATCH)
    assert decided.json()["item_status"] == "disputed", decided.text
    return item_id


async def test_an_admin_who_decided_cannot_adjudicate_the_dispute(
    double_desk: Desk, start_api: StartApi
) -> None:
    desk = double_desk
    ruling = {"decision": "faithful", "note": "the bound holds"}
    for n, (first, second) in enumerate((("admin", "alice"), ("alice", "admin")), start=8):
        item_id = await dispute(desk, n, first, second)
        refused = await desk.post("admin", f"/v1/queue/{item_id}/adjudicate", ruling)
        assert error_code(refused, 409) == "adjudicator_decided"
        item = await desk.item(item_id)
        assert (item["status"], len(item["trail"])) == ("disputed", 2)


# ---- The review page: what it offers follows the same rules ---------------------------------


async def page_of(client: httpx2.AsyncClient, item_id: int) -> httpx2.Response:
    page = await client.get(f"/review/items/{item_id}")
    assert page.status_code == 200, page.text
    return page


async def decide_on_page(client: httpx2.AsyncClient, item_id: int, decision: str) -> str:
    """Decide as the page's form does; the page it lands on."""
    form = {"csrf_token": csrf_of(await page_of(client, item_id)), "decision": decision}
    form |= {"note": "n < 0 is dropped"} if decision == "mismatch" else {}
    posted = await client.post(f"/review/items/{item_id}/decision", data=form)
    assert posted.status_code == 303, posted.text
    landed = await client.get(posted.headers["location"])
    assert landed.status_code == 200, landed.text
    return landed.text


def offers_undo(page: str) -> bool:
    return 'id="undo"' in page


async def test_the_page_offers_no_undo_for_a_final_decision(double_desk: Desk) -> None:
    desk = double_desk
    blind = await new_item(desk, 10, "flagged")  # an audit, double: alice first, bob second
    sighted = await new_item(desk, 11, "needs_review")
    async with browser(desk.api) as alice, browser(desk.api) as bob:
        await sign_in(alice, desk.keys["alice"])
        await sign_in(bob, desk.keys["bob"])
        first = await decide_on_page(alice, blind, "faithful")
        assert "a second person decides it next" in first and offers_undo(first)
        second = await decide_on_page(bob, blind, "mismatch")
        assert "disputed until an admin adjudicates it" in second
        assert "second decision is final" in second and not offers_undo(second)
        await decide_on_page(alice, sighted, "faithful")
        agreed = await decide_on_page(bob, sighted, "faithful")
        assert "so it is final: no undo" in agreed and not offers_undo(agreed)
        # The post is refused too, page or not.
        token = csrf_of(await page_of(bob, sighted))
        posted = await bob.post(f"/review/items/{sighted}/undo", data={"csrf_token": token})
        assert posted.status_code == 409 and "decision_final" in posted.text


async def test_the_page_offers_a_party_no_adjudication_and_refuses_one(
    double_desk: Desk,
) -> None:
    desk = double_desk
    item_id = await dispute(desk, 12, "admin", "alice")
    async with browser(desk.api) as admin:
        await sign_in(admin, desk.keys["admin"])
        page = (await page_of(admin, item_id)).text
        assert 'id="adjudicate-form"' not in page
        assert re.search(r"not one who gave either: another admin must", page)
        form = {"csrf_token": csrf_of(await page_of(admin, item_id))}
        form |= {"decision": "faithful", "note": "mine stands"}
        posted = await admin.post(f"/review/items/{item_id}/adjudicate", data=form)
        assert posted.status_code == 409 and "adjudicator_decided" in posted.text
    assert (await desk.item(item_id))["status"] == "disputed"
