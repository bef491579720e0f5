"""Bidi controls in a real headless Chromium (issue 32, item 4): sent raw, an override or
even a mere RLM makes the browser draw text in another order than it is stored; on the
review page every control is a visible marker and the text around it is drawn in its
stored order."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser.test_review_page import open_item, sign_in
from tests.support.review_site import ReviewSite

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

INFORMAL = "Show that x = \u200f12 - 34 is negative when a < b."
FORMAL = "theorem t (a b : ℕ) (h : a < b) :\n  \u202eb < a\u202c := by sorry"
HEADER = "import Mathlib\nopen\u2066 Nat\u2069"
CONTROLS = "\u200f\u202e\u202c\u2066\u2069"

# Where the browser draws the first `character` after `after` in the element's text: the
# left edge of that one character's box, read from a Range over the text nodes.
DRAWN_AT = """
([selector, after, character]) => {
  const walker = document.createTreeWalker(document.querySelector(selector), NodeFilter.SHOW_TEXT);
  const nodes = [];
  let text = "";
  for (let node; (node = walker.nextNode()); text += node.data) nodes.push([node, text.length]);
  const start = text.indexOf(after);
  const at = start < 0 ? -1 : text.indexOf(character, start + after.length);
  if (at < 0) return null;
  const [node, from] = nodes.find(([n, from]) => from <= at && at < from + n.data.length);
  const range = document.createRange();
  range.setStart(node, at - from);
  range.setEnd(node, at - from + 1);
  return range.getBoundingClientRect().left;
}
"""


def drawn_at(page: Page, selector: str, after: str, character: str) -> float:
    left = page.evaluate(DRAWN_AT, [selector, after, character])
    assert left is not None, (selector, after, character)
    return float(left)


def test_sent_raw_a_mark_or_an_override_reorders_what_the_browser_draws(
    browser_page: Page,
) -> None:
    """Why the marks count as controls too: one RLM draws `12 - 34` as `34 - 12`."""
    page = browser_page
    page.set_content(
        '<p id="mark" dir="ltr">x = \u200f12 - 34</p><p id="override">h : \u202eb < a\u202c</p>'
    )
    assert drawn_at(page, "#mark", "=", "3") < drawn_at(page, "#mark", "=", "1")
    assert drawn_at(page, "#override", ":", "a") < drawn_at(page, "#override", ":", "b")


def test_the_review_page_marks_each_control_and_draws_the_text_in_stored_order(
    browser_page: Page, site: ReviewSite, shots: Path
) -> None:
    page = browser_page
    item_id = site.seed("bidi", informal=INFORMAL, formal=FORMAL, header=HEADER)
    sign_in(page, site, site.alice)
    open_item(page, site, item_id)

    shown = page.inner_text("main")
    assert not any(control in shown for control in CONTROLS)
    assert "x = ⟨U+200F RLM⟩12 - 34" in page.inner_text("#informal")
    assert "⟨U+202E RLO⟩b < a⟨U+202C PDF⟩ := by sorry" in page.inner_text("#lean-formal")
    assert "open⟨U+2066 LRI⟩ Nat⟨U+2069 PDI⟩" in page.inner_text("#lean-header")
    # Drawn in the order stored: `12` before `34`, `b` before `a`.
    assert drawn_at(page, "#informal", "RLM⟩", "1") < drawn_at(page, "#informal", "RLM⟩", "3")
    assert drawn_at(page, "#lean-formal", "RLO⟩", "b") < drawn_at(page, "#lean-formal", "RLO⟩", "a")
    marks = page.locator("#informal mark.bidi, #lean-formal mark.bidi, #lean-header mark.bidi")
    assert marks.count() == 5
    assert marks.first.get_attribute("title") == "U+200F RIGHT-TO-LEFT MARK"
    for index in range(5):  # each marker is drawn, in a colour of its own
        box = marks.nth(index).bounding_box()
        assert box is not None and box["width"] > 10
        background = marks.nth(index).evaluate("m => getComputedStyle(m).backgroundColor")
        assert background == "rgb(75, 41, 145)"  # --odd
    # The finding list names each control by its code point.
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in page.inner_text("main")
    page.locator("#lean-formal").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "bidi-controls-marked.png"), full_page=True)
