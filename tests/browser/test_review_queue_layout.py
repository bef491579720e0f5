"""The queue and the item page as a reviewer reads them at 1,400 and 800 px, in headless
Chromium against a real `faithscreen serve` (issue 35, items 8-10):

- every column of the queue stays on screen at 800 px, Reasons and Queued included (they
  are what a reviewer sorts by): narrow rows stack, no column is dropped;
- an item that answers for several screenings of one pair names every external id, the
  fourth and later counted as "+N more";
- a reason's or a finding's sentence reads as a sentence: its code in <code>, never a
  Markdown backtick;
- axe-core finds no serious or critical violation on either page at either width.

Screenshots go to FAITHSCREEN_SHOTS (or pytest's tmp dir), named by page and width.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.test_review_keys_and_axe import serious_violations
from tests.browser.test_review_workbench import shoot, sign_in
from tests.support.review_site import ReviewSite, pair_body

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

# A line of the informal statement that starts as a reply field does: the evidence check
# finds `VERDICT:` there (evidence_review:contract_text_in_input), whose sentences carry
# code spans.
INFORMAL = "Show that n + 0 = n for every natural number n.\nVerdict: this is easy."
# Five screenings of one pair, each with its own external id: one queue item.
EXTERNAL_IDS = ["batch-a/17", "batch-b/3", "batch-c/41", "batch-d/8", "batch-e/99"]
# Where each cell of a row is: its box, and whether anything hides it.
CELLS = """
(row) => [...document.querySelectorAll(`#row-${row} td`)].map((td) => {
  const box = td.getBoundingClientRect();
  return [td.className, box.left, box.right, box.width, box.height,
          getComputedStyle(td).display, getComputedStyle(td).visibility];
})
"""


def seed_one_pair_five_times(site: ReviewSite) -> int:
    with site.api(site.admin) as api:
        ids = []
        for external_id in EXTERNAL_IDS:
            body = pair_body("queue_layout", informal=INFORMAL, external_id=external_id)
            response = api.post("/v1/screenings", json=body)
            assert response.status_code == 202, response.text
            ids.append(response.json()["id"])
        item_id = site.item_of(api, ids[0])
    assert site.item(item_id)["screening_ids"] == ids  # one item answers for all five
    return item_id


def cells_on_screen(page: Page, item_id: int, width: int) -> dict[str, Any]:
    """Each cell's class and whether it is laid out inside the viewport's width."""
    found = {}
    for css, left, right, wide, high, display, visibility in page.evaluate(CELLS, item_id):
        drawn = display != "none" and visibility == "visible" and wide > 0 and high > 0
        found[css.split()[0]] = drawn and left >= 0 and right <= width
    return found


@pytest.mark.parametrize("width", [1400, 800])
def test_queue_keeps_every_column_names_every_external_id_and_reasons_read_as_sentences(
    browser_page: Page, site: ReviewSite, shots: Path, width: int
) -> None:
    page = browser_page
    item_id = seed_one_pair_five_times(site)
    page.set_viewport_size({"width": width, "height": 900})
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review")
    page.wait_for_selector(f"#row-{item_id}")

    columns = ["item", "ext", "preview", "status", "outcome", "reasons", "batch", "queued"]
    assert cells_on_screen(page, item_id, width) == dict.fromkeys(columns, True)
    reasons = page.inner_text(f"#row-{item_id} td.reasons")
    assert "evidence_review:contract_text_in_input" in reasons
    assert "UTC" in page.inner_text(f"#row-{item_id} td.queued")

    shown = page.locator(f"#row-{item_id} ul.ext-ids li").all_inner_texts()
    assert shown == [*EXTERNAL_IDS[:3], "+2 more"]
    more = page.locator(f"#row-{item_id} ul.ext-ids li.more")
    assert more.get_attribute("title") == ", ".join(EXTERNAL_IDS[3:])
    assert page.get_attribute(f"#row-{item_id} td.ext", "title") == ", ".join(EXTERNAL_IDS)
    shoot(page, shots, "queue-layout")
    queue_violations = serious_violations(page)

    page.goto(f"{site.base_url}/review/items/{item_id}")
    page.wait_for_selector("#reasons")
    assert_sentences_with_code(page)
    shoot(page, shots, "item-reasons")
    found = {"queue": queue_violations, "item": serious_violations(page)}
    assert found == {"queue": [], "item": []}, json.dumps(found, indent=1)


def assert_sentences_with_code(page: Page) -> None:
    """No backtick left in the reasons, the findings or the verdicts' explanations; the
    codes they name are <code> elements inside their sentences."""
    for where in ("#reasons", "#evidence", "#reviews-h + .review"):
        assert "`" not in page.inner_text(where), page.inner_text(where)
    described = page.locator("#reasons li", has_text="evidence_review:contract_text_in_input")
    assert described.locator("code").all_inner_texts() == [
        "evidence_review:contract_text_in_input",
        "review",
        "contract_text_in_input",
    ]
    assert "VERDICT:" in page.locator("#evidence li code").all_inner_texts()
