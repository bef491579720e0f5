"""The item page and the queue in headless Chromium at 1,400 and 800 px against a real
`faithscreen serve` (issue 35, items 6, 7 and 11):

- the back-translation is rendered as the informal statement is (MathML, a raw-TeX toggle);
- a binomial's entries are as large as the text beside them, not script size;
- the queue's preview is a readable plain-text rendering (C(n, k), ∑ₖ₌₁ⁿ), never a mix;
- a comment and "Assign to me" go through the page's forms and show on the item and in the
  queue, which searches statements and external ids and filters to "mine";
- the stats page says time per item runs from the first opening;
- axe-core finds no violation at all on these pages.

Screenshots go to FAITHSCREEN_SHOTS (or pytest's tmp dir), named by page and width.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_review_keys_and_axe import AXE, RUN_AXE
from tests.browser.test_review_workbench import VIEWPORTS, shoot, sign_in
from tests.support.review_site import ReviewSite
from tests.support.scripted_openai import contract_reply

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("postgres")]

INFORMAL = "Prove that $\\sum_{k=1}^n \\binom{n}{k} = 2^n - 1$ for every natural number $n$."
BACK = "For every n, $\\left(\\frac{1}{4}\\right)^{n+1} \\le \\binom{n}{k}$ holds."
FORMAL = (
    "theorem threads_{marker} (n : ℕ) : ∑ k ∈ Finset.Icc 1 n, n.choose k = 2 ^ n - 1 := by sorry"
)
REPLIES = {
    "translator": contract_reply("UNCLEAR", back_translation=BACK),
    "judge": "Looks right to me.",
}
PREVIEW = "Prove that ∑ₖ₌₁ⁿ C(n, k) = 2ⁿ - 1 for every natural number n."
COMMENT = "Is <n> meant to start at 1? The Lean sums over Icc 1 n."
# The font size of a binomial's entries and of the formula's text outside any script.
SIZES = """
(s) => {
  const math = document.querySelector(s);
  const scripted = "mfrac, msub, msup, msubsup, munder, mover, munderover";
  const entry = math.querySelector('mfrac[linethickness="0"] mi');
  const beside = [...math.querySelectorAll("mi, mn, mo")].find((e) => !e.closest(scripted));
  const size = (e) => parseFloat(getComputedStyle(e).fontSize);
  return [size(entry), size(beside)];
}
"""


def violations(page: Page) -> list[dict[str, Any]]:
    page.evaluate(AXE.read_text("utf-8"))
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE)
    return found


def seed(site: ReviewSite, marker: str) -> int:
    body = {
        "informal": INFORMAL,
        "formal": FORMAL.format(marker=marker),
        "replies": REPLIES,
    }
    return site.seed(f"threads-{marker}", **body)


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_tex_comments_and_assignment_on_the_page(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    if not AXE.exists():
        pytest.skip(f"{AXE} is not installed (npm ci --prefix tests/browser/axe)")
    page = browser_page
    page.set_viewport_size(viewport)
    width = viewport["width"]
    item_id = seed(site, f"w{width}")
    other = seed(site, f"other{width}")
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/items/{item_id}")
    found = {"item": violations(page)}

    # The back-translation: MathML, a toggle away from its TeX as written.
    assert page.locator("#back-1 math").count() == 1
    assert "\\" not in page.inner_text("#back-1")
    assert page.is_hidden("#back-1-raw")
    page.click("#toggle-back-1")
    assert page.is_visible("#back-1-raw") and page.is_hidden("#back-1")
    assert "\\left(\\frac{1}{4}\\right)^{n+1}" in page.inner_text("#back-1-raw")
    page.click("#toggle-back-1")
    assert page.is_visible("#back-1")

    # A binomial's entries are as large as the letters beside them.
    for where in ("#informal .tex", "#back-1 .tex"):
        entry, beside = page.evaluate(SIZES, where)
        assert entry == beside, (where, entry, beside)

    # A comment, through the page's form; shown as written (never as HTML).
    page.fill("#comment-body", COMMENT)
    page.click("#add-comment")
    page.wait_for_selector("#comments li")
    assert COMMENT in page.inner_text("#comments")
    assert "alice" in page.inner_text("#comments li")
    page.click("#take")
    page.wait_for_selector("#assignee strong")
    assert page.inner_text("#assignee") == "Assigned to: you"
    shoot(page, shots, "threads-item")
    found["item-after"] = violations(page)

    # The queue: the preview reads as text; search and "mine" find the item.
    page.goto(f"{site.base_url}/review")
    assert page.inner_text(f"#row-{item_id} td.preview") == PREVIEW
    page.fill("#search", f"threads-w{width}")
    page.select_option("#mine", "true")
    page.click("button:has-text('Filter')")
    page.wait_for_selector(f"#row-{item_id}")
    assert page.locator(f"#row-{other}").count() == 0
    assert "assigned to you" in page.inner_text(f"#row-{item_id} td.status")
    shoot(page, shots, "threads-queue")
    found["queue"] = violations(page)

    page.goto(f"{site.base_url}/review/stats")
    assert "first opened the item" in page.inner_text("#time-rule")
    found["stats"] = violations(page)
    assert all(v == [] for v in found.values()), json.dumps(found, indent=1)
