"""The reviewer web page in a real headless Chromium against a real `faithscreen serve`:
sign in through the form, find the item in the queue, read it, claim, decide with the
keyboard, and see it resolved on the page and over the API."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.review_site import FORMAL, HEADER, INFORMAL, ReviewSite

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

# The Lean box's scroll and client widths, and how many rows of text it shows.
LEAN_BOX = """
(() => {
  const box = document.getElementById("lean-formal");
  const style = getComputedStyle(box);
  const text = box.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  return [box.scrollWidth, box.clientWidth, Math.round(text / parseFloat(style.lineHeight))];
})()
"""
NOTE = "n is dropped from the formal statement; for m ≤ n the floor is fine"


def sign_in(page: Page, site: ReviewSite, key: str) -> None:
    page.goto(f"{site.base_url}/review")
    page.fill("#key", key)
    page.click("button:has-text('Sign in')")


def open_item(page: Page, site: ReviewSite, item_id: int) -> None:
    page.goto(f"{site.base_url}/review/items/{item_id}")
    page.wait_for_selector("#item-status")


def test_a_reviewer_signs_in_reads_claims_and_decides_mismatch_with_the_keyboard(
    browser_page: Page, site: ReviewSite, shots: Path
) -> None:
    page = browser_page
    item_id = site.seed("sum_range_id")
    sign_in(page, site, site.alice)
    assert page.url == f"{site.base_url}/review"
    assert "Signed in as alice (reviewer)" in page.inner_text("header")
    page.click(f"a:has-text('#{item_id}')")
    page.wait_for_url(f"**/review/items/{item_id}")

    assert page.inner_text("#lean-formal") == FORMAL
    assert page.inner_text("#lean-header") == HEADER
    assert page.inner_text("#informal") == INFORMAL
    page.screenshot(path=str(shots / "item-1366x768.png"))
    # The model saying UNCLEAR and a reply nobody could read are told apart.
    assert sorted(page.locator(".review .badge").all_inner_texts()) == [
        "model said unclear",
        "unreadable",
    ]
    assert "translator_unclear" in page.inner_text("main")

    page.click("#claim")
    page.wait_for_selector("text=You hold this item now.")
    assert page.inner_text("#claim-state").startswith("Claimed by you until")

    page.click("#note")
    page.keyboard.type(NOTE)  # holds f, m, n and r: none may act while typing
    assert page.input_value("#note") == NOTE
    assert page.inner_text("#item-status") == "claimed"
    page.keyboard.press("Escape")  # leaves the note box
    page.keyboard.press("m")
    page.wait_for_selector("text=Decision recorded: the item is resolved.")

    assert page.inner_text("#item-status") == "resolved"
    assert page.inner_text("#claim-state").startswith("Resolved: mismatch by alice at")
    assert NOTE in page.inner_text("table.trail")
    item = site.item(item_id)
    assert (item["status"], item["final_decision"]) == ("resolved", "mismatch")
    assert [(d["decision"], d["note"], d["actor"]) for d in item["trail"]] == [
        ("mismatch", NOTE, "alice")
    ]


def test_f_on_an_open_item_claims_and_decides_in_one_post_and_n_goes_to_the_next(
    browser_page: Page, site: ReviewSite
) -> None:
    page = browser_page
    first, second = site.seed("first_pair"), site.seed("second_pair")
    sign_in(page, site, site.alice)
    open_item(page, site, first)
    assert page.inner_text("#item-status") == "open"

    page.keyboard.press("f")
    page.wait_for_selector("text=Decision recorded: the item is resolved.")
    item = site.item(first)
    assert (item["status"], item["final_decision"]) == ("resolved", "faithful")
    assert [(d["decision"], d["actor"]) for d in item["trail"]] == [("faithful", "alice")]

    page.keyboard.press("n")
    page.wait_for_url(f"**/review/items/{second}")
    assert page.inner_text("#item-status") == "open"


def test_r_releases_the_claim(browser_page: Page, site: ReviewSite) -> None:
    page = browser_page
    item_id = site.seed("to_release")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)
    page.keyboard.press("c")
    page.wait_for_selector("text=You hold this item now.")
    assert site.item(item_id)["claimed_by"] == "alice"

    page.keyboard.press("r")
    page.wait_for_selector("text=Released: the item is open again.")
    assert (site.item(item_id)["status"], site.item(item_id)["claimed_by"]) == ("open", None)


def test_deciding_an_item_another_reviewer_took_meanwhile_shows_a_readable_409(
    browser_page: Page, site: ReviewSite
) -> None:
    page = browser_page
    item_id = site.seed("taken_meanwhile")
    bob = site.make_key("reviewer", "bob")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)  # open when the page was drawn: the buttons are there
    with site.api(bob) as api:
        assert api.post(f"/v1/queue/{item_id}/claim").status_code == 200

    page.keyboard.press("f")
    page.wait_for_selector("text=That cannot be done now")
    body = page.inner_text("main")
    assert f"queue item {item_id} is claimed by 'bob'" in body
    assert "{" not in body  # a page, not the API's JSON
    page.click(f"text=Back to item #{item_id}")
    assert page.inner_text("#claim-state").startswith("Claimed by bob until")
    assert page.locator("#decide-faithful").count() == 0
    item = site.item(item_id)
    assert (item["status"], item["claimed_by"], item["trail"]) == ("claimed", "bob", [])


def test_a_bad_key_and_a_submitter_key_are_refused_at_sign_in_with_a_message(
    browser_page: Page, site: ReviewSite
) -> None:
    page = browser_page
    sign_in(page, site, "fs_" + "x" * 43)
    assert "That key is not valid" in page.inner_text("[role=alert]")
    assert page.locator("#key").count() == 1

    sign_in(page, site, site.make_key("submitter", "sub"))
    alert = page.inner_text("[role=alert]")
    assert "Only a reviewer or admin key can use the review pages" in alert
    page.goto(f"{site.base_url}/review")
    assert page.locator("#key").count() == 1  # still not signed in


def test_the_item_page_fits_a_laptop_screen(browser_page: Page, site: ReviewSite) -> None:
    """1366x768 without zooming: no sideways scrolling of the page, the long Lean line
    soft-wrapped inside its box (never cut at its edge, never a sideways scroll), and text
    is at a readable size."""
    page = browser_page
    item_id = site.seed("long_line")
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)
    page_width = page.evaluate("document.documentElement.scrollWidth")
    assert page_width <= page.viewport_size["width"]
    scroll_width, client_width, lines = page.evaluate(LEAN_BOX)
    assert scroll_width <= client_width  # nothing hidden past the right edge
    assert lines >= 2  # the one source line wraps onto more rows
    assert page.locator("#lean-formal .ln").count() == 1
    sizes = page.evaluate(
        "['body', '#lean-formal', '#informal'].map("
        "s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))"
    )
    assert min(sizes) >= 14, sizes
    raw = page.locator(".review details").first
    assert not raw.evaluate("d => d.open")
    raw.locator("summary").click()
    assert raw.evaluate("d => d.open")
    assert re.search(r"Looks right to me\.|VERDICT: UNCLEAR", raw.inner_text())
