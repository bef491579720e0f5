"""Deciding on the review workbench in headless Chromium at 1400x1000 and 800x1000, against
a real `faithscreen serve`: defects ticked with the keys and a mismatch refused on the
page without a note or defect, Undo while its window is open, unsure with its note, a blind
audit that shows the pair only until it is decided (a decision that is then final: no
Undo), and a double review that two people decide apart (neither seeing the other's, the
second decision final) and an admin adjudicates."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_review_workbench import VIEWPORTS, WIDE, shoot, sign_in
from tests.support.review_site import MakeKey, ReviewSite, key_of, start_key
from tests.support.serve_process import ServeProcess

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("postgres")]

DONE = "Decision recorded: the item is resolved."
NOTE = "the formal statement adds h₀ : 0 < n, which the informal one does not assume"


@contextmanager
def site_with(
    database_url: str, make_key: MakeKey, tmp_path: Path, env: dict[str, str]
) -> Iterator[tuple[ReviewSite, str]]:
    """A server with these settings, the keys of alice and root, and bob's (a reviewer)."""
    names = [("reviewer", "alice"), ("admin", "root"), ("reviewer", "bob")]
    keys = [start_key(database_url, role, name) for role, name in names]
    log = tmp_path / "serve-tuned.log"
    server = ServeProcess(database_url, {"FAITHSCREEN_AUTH": "on", **env}, log)
    try:
        alice, admin, bob = (key_of(process) for process in keys)
        yield ReviewSite(server, database_url, make_key, alice, admin), bob
    finally:
        server.kill()


def open_item(page: Page, site: ReviewSite, item_id: int) -> None:
    page.goto(f"{site.base_url}/review/items/{item_id}")
    page.wait_for_selector("#item-status")


def press(page: Page, *keys: str) -> None:
    page.locator("h1").click()  # out of any text box: the keys act
    for key in keys:
        page.keyboard.press(key)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_mismatch_takes_defects_from_the_keys_and_undo_takes_it_back(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    item_id = site.seed("defects")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)

    press(page, "m")  # neither note nor defect: the page says so and sends nothing
    problem = page.locator("#decision-problem")
    problem.wait_for()
    assert "needs a note or at least one defect" in problem.inner_text()
    assert site.item(item_id)["trail"] == []
    shoot(page, shots, "item-mismatch-refused")

    press(page, "2", "6", "6", "6")  # 6 ticked, unticked, ticked again
    assert page.is_checked("#defect-extra_hypothesis")
    assert page.is_checked("#defect-wrong_constant")
    assert not page.is_checked("#defect-dropped_hypothesis")
    press(page, "m")
    page.wait_for_selector(f"text={DONE}")
    row = site.item(item_id)["trail"][-1]
    assert (row["decision"], row["defects"], row["actor"]) == (
        "mismatch",
        ["extra_hypothesis", "wrong_constant"],
        "alice",
    )
    assert "extra_hypothesis" in page.inner_text("table.trail")
    assert page.is_visible("#undo")
    shoot(page, shots, "item-decided-undo")

    page.click("#undo")
    page.wait_for_selector("text=Withdrawn: your decision is taken back")
    item = site.item(item_id)
    assert (item["status"], item["claimed_by"], item["final_decision"]) == (
        "claimed",
        "alice",
        None,
    )
    assert [r["kind"] for r in item["trail"]] == ["decision", "withdrawal"]
    assert item["trail"][1]["withdraws_id"] == row["id"]
    assert page.inner_text("#claim-state").startswith("Claimed by you until")
    assert page.locator("#undo").count() == 0
    assert "withdrew" in page.inner_text("table.trail")
    shoot(page, shots, "item-withdrawn")


def test_faithful_with_a_defect_ticked_is_refused_on_the_page(
    browser_page: Page, site: ReviewSite
) -> None:
    page = browser_page
    item_id = site.seed("faithful_defect")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)
    press(page, "1", "f")
    assert "Only a mismatch takes defects" in page.inner_text("#decision-problem")
    press(page, "1", "f")  # unticked: now it goes
    page.wait_for_selector(f"text={DONE}")
    assert site.item(item_id)["final_decision"] == "faithful"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_unsure_needs_a_note_and_gives_the_item_back_to_the_queue(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    item_id = site.seed("unsure")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)
    press(page, "u")
    assert "Unsure needs a note" in page.inner_text("#decision-problem")
    page.click("#note")
    page.keyboard.type("is ⌊m/2⌋ over ℝ the informal floor? not sure")  # u, m, f typed
    page.keyboard.press("Escape")
    press(page, "u")
    page.wait_for_selector("text=Unsure recorded: the item is back in the queue")
    item = site.item(item_id)
    assert (item["status"], item["claimed_by"], item["final_decision"]) == ("open", None, None)
    assert [(r["decision"], r["actor"]) for r in item["trail"]] == [("unsure", "alice")]
    assert page.inner_text("#item-status") == "open"
    assert page.locator("#claim").count() == 1
    shoot(page, shots, "item-unsure")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_blind_item_shows_the_pair_only_until_it_is_decided(
    browser_page: Page,
    database_url: str,
    make_key: MakeKey,
    tmp_path: Path,
    shots: Path,
    viewport: dict[str, int],
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    env = {"FAITHSCREEN_REVIEW_BLIND": "all"}
    with site_with(database_url, make_key, tmp_path, env) as (site, _):
        item_id = site.seed("blind_pair")
        sign_in(page, site, site.alice)
        page.goto(f"{site.base_url}/review")
        row = page.locator(f"#row-{item_id}")
        assert "blind" in row.inner_text() and "needs_review" not in row.inner_text()
        assert "translator_unclear" not in row.inner_text()
        shoot(page, shots, "queue-blind")

        open_item(page, site, item_id)
        assert page.is_visible("#blind-notice")
        body = page.inner_text("main")
        for hidden in ("needs_review", "translator_unclear", "The sum of the first n numbers"):
            assert hidden not in body
        assert page.locator("#reviews-h, #why-h, #back-translations").count() == 0
        assert "Looks right to me" not in page.content()
        assert page.inner_text("#lean-formal").startswith("theorem blind_pair")
        shoot(page, shots, "item-blind")

        press(page, "f")
        page.wait_for_selector(f"text={DONE}")
        # Now she sees the models' answer: an undo would let her decide again knowing it.
        assert "so it is final: no undo" in page.inner_text("main")
        assert page.locator("#undo").count() == 0
        assert page.locator("#blind-notice").count() == 0
        assert "translator_unclear" in page.inner_text("#reasons")
        assert page.locator(".review").count() == 2
        assert "blind" in page.inner_text("table.trail")
        assert site.item(item_id)["trail"][0]["blind"] is True
        shoot(page, shots, "item-blind-resolved")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_double_review_is_decided_apart_and_a_dispute_adjudicated_by_an_admin(
    browser_page: Page,
    database_url: str,
    make_key: MakeKey,
    tmp_path: Path,
    shots: Path,
    viewport: dict[str, int],
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    env = {"FAITHSCREEN_REVIEW_DOUBLE_RATE": "1", "FAITHSCREEN_REVIEW_BLIND": "off"}
    with site_with(database_url, make_key, tmp_path, env) as (site, bob):
        item_id = site.seed("double_pair")
        sign_in(page, site, site.alice)
        open_item(page, site, item_id)
        assert page.is_visible("#double-review")
        press(page, "f")
        page.wait_for_selector("text=a second person decides it next")
        assert page.inner_text("#item-status") == "awaiting_second"
        assert page.locator("#decide-faithful").count() == 0  # not twice by one person
        assert page.inner_text("#claim-state").startswith("You gave the first decision")

        sign_in(page, site, bob)
        page.goto(f"{site.base_url}/review/stats")  # alice's count would tell bob hers
        page.wait_for_selector("text=No decision in this range.")
        page.goto(f"{site.base_url}/review?status=awaiting_second")
        assert page.inner_text("#total-awaiting_second .count") == "1"
        assert page.locator(f"#row-{item_id}").count() == 1
        open_item(page, site, item_id)
        assert "No decision yet." in page.inner_text("#trail-h + *")  # alice's is hidden
        assert "alice" not in page.inner_text("main")
        shoot(page, shots, "item-awaiting-second")
        press(page, "7", "m")
        page.wait_for_selector("text=the item is disputed until an admin adjudicates it")
        assert page.inner_text("#item-status") == "disputed"
        assert page.locator("#decide-mismatch, #adjudicate-form").count() == 0
        assert "alice" in page.inner_text("table.trail")  # both are in: both are shown
        # Told whether he agreed, bob cannot take his decision back and switch.
        assert "A second decision is final: no undo." in page.inner_text("main")
        assert page.locator("#undo").count() == 0
        assert page.inner_text("#claim-state").endswith("Only an admin settles it (adjudicate).")
        shoot(page, shots, "item-disputed-second")

        sign_in(page, site, site.admin)
        open_item(page, site, item_id)
        assert page.inner_text("#claim-state").startswith("Disputed")
        shoot(page, shots, "item-disputed-admin")
        page.fill("#adjudicate-note", "h₀ is implied by the informal 'positive'")
        page.click("#adjudicate-faithful")
        page.wait_for_selector("text=Adjudicated: the item is resolved.")
        item = site.item(item_id)
        assert (item["status"], item["final_decision"]) == ("resolved", "faithful")
        kinds = [(r["kind"], r["decision"], r["actor"]) for r in item["trail"]]
        assert kinds == [
            ("decision", "faithful", "alice"),
            ("decision", "mismatch", "bob"),
            ("adjudication", "faithful", "root"),
        ]
        assert page.inner_text("#claim-state").startswith("Resolved: faithful adjudicated by root")
        shoot(page, shots, "item-adjudicated")


def test_an_admin_who_decided_is_not_offered_the_adjudication(
    browser_page: Page, database_url: str, make_key: MakeKey, tmp_path: Path, shots: Path
) -> None:
    page = browser_page
    page.set_viewport_size(WIDE)
    env = {"FAITHSCREEN_REVIEW_DOUBLE_RATE": "1", "FAITHSCREEN_REVIEW_BLIND": "off"}
    with site_with(database_url, make_key, tmp_path, env) as (site, bob):
        item_id = site.seed("party_pair")
        sign_in(page, site, site.admin)
        open_item(page, site, item_id)
        press(page, "f")
        page.wait_for_selector("text=a second person decides it next")
        sign_in(page, site, bob)
        open_item(page, site, item_id)
        press(page, "7", "m")
        page.wait_for_selector("text=the item is disputed until an admin adjudicates it")

        sign_in(page, site, site.admin)  # root gave the first decision: a party
        open_item(page, site, item_id)
        assert page.locator("#adjudicate-form").count() == 0
        assert page.inner_text("#claim-state").endswith("another admin must.")
        shoot(page, shots, "item-disputed-party-admin")
        assert site.item(item_id)["status"] == "disputed"
