"""A reviewer's whole item without the mouse, then axe-core on every review page, in headless
Chromium against one real `faithscreen serve` (one server for both: browser tests are the
costly part of the suite).

Keys only (keyboard.press and keyboard.type, never a click): sign in, open the oldest open
item from the queue, go to the evidence finding, tick defects, type a note, decide, undo,
decide again and go on to the next item; after each step the focus is where the next key
needs it and is drawn (`:focus-visible` with an outline).

axe-core comes from the npm registry, pinned in tests/browser/axe/package.json and
installed by `npm ci --prefix tests/browser/axe` (.ci/run); it is evaluated into the page
from that file, never fetched from elsewhere. The sign-in, queue, item, blind item, stats,
error and calibration pages must have no serious or critical violation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.browser.conftest import _missing
from tests.browser.test_calibration_html import written_page
from tests.browser.test_review_decisions import site_with
from tests.browser.test_review_workbench import shoot
from tests.support.review_queue import FAITHFUL, JUDGE_FAITHFUL
from tests.support.review_site import MakeKey, ReviewSite

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("postgres")]

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
# What a violation is reported as: enough to find and fix it from the test's output.
RUN_AXE = """
async () => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ")),
  }));
}
"""
# The element in focus: its id (or tag), whether it is drawn as focused, and its outline.
FOCUS = """
() => {
  const el = document.activeElement;
  return [el.id || el.tagName.toLowerCase(), el.matches(":focus-visible"),
          getComputedStyle(el).outlineStyle];
}
"""
SPAN_FORMAL = "theorem keys_first (a b : ℕ)\n    (h : a - b ≤ 4) : a ≤ b + 4 := by sorry"
SPAN_INFORMAL = (
    "If \\emph{the difference} of $a$ and $b$ is at most $4$, then:\n"
    "\\begin{enumerate}\n\\item[(i)] $a \\le b + 4$.\n\\end{enumerate}"
)
NOTE = "truncated subtraction: a - b is 0 when a < b, the informal one means integers"


@pytest.fixture
def audit_site(database_url: str, make_key: MakeKey, tmp_path: Path) -> Iterator[ReviewSite]:
    """Every passed screening also sampled for a blind audit (the default blind mode)."""
    with site_with(database_url, make_key, tmp_path, {"FAITHSCREEN_AUDIT_RATE": "1"}) as made:
        yield made[0]


def focus(page: Page) -> tuple[str, bool, str]:
    found: list[Any] = page.evaluate(FOCUS)
    return found[0], found[1], found[2]


def assert_focus_drawn_on(page: Page, element_id: str) -> None:
    where, drawn, outline = focus(page)
    assert (where, drawn) == (element_id, True), (where, drawn)
    assert outline != "none"


def serious_violations(page: Page) -> list[dict[str, Any]]:
    if not AXE.exists():
        _missing(f"{AXE} is not installed (npm ci --prefix tests/browser/axe)")
    page.evaluate(AXE.read_text("utf-8"))
    found: list[dict[str, Any]] = page.evaluate(RUN_AXE)
    return [v for v in found if v["impact"] in ("serious", "critical")]


def test_a_whole_item_by_keys_only_and_every_page_without_serious_axe_violations(
    browser_page: Page, audit_site: ReviewSite, tmp_path: Path, shots: Path
) -> None:
    site, page = audit_site, browser_page
    page.set_viewport_size({"width": 1400, "height": 1000})
    first = site.seed("keys_first", formal=SPAN_FORMAL, informal=SPAN_INFORMAL)
    second = site.seed("keys_second")
    passed = {"translator": FAITHFUL, "judge": JUDGE_FAITHFUL}
    blind = site.seed("keys_blind_audit", replies=passed)

    # Sign in: the key box has the focus when the page opens.
    page.goto(f"{site.base_url}/review/sign-in")
    assert_focus_drawn_on(page, "key")
    page.keyboard.type(site.alice)
    page.keyboard.press("Enter")
    page.wait_for_selector("#queue")

    # From the queue, `j` walks the rows, `n` opens the oldest open item.
    page.keyboard.press("j")
    assert_focus_drawn_on(page, f"open-{first}")
    page.keyboard.press("n")
    page.wait_for_url(f"**/review/items/{first}")

    # Read: `g` goes to the evidence finding's span in the Lean.
    page.keyboard.press("g")
    assert page.locator("#lean-formal mark.span.current").all_inner_texts() == ["a - b"]

    # Defects by number: each ticked box takes the focus, drawn.
    page.keyboard.press("1")
    page.keyboard.press("6")
    assert_focus_drawn_on(page, "defect-wrong_constant")
    assert page.is_checked("#defect-dropped_hypothesis")

    # `t` to the note, type, Esc out of it, `m` decides.
    page.keyboard.press("t")
    assert_focus_drawn_on(page, "note")
    page.keyboard.type(NOTE)  # holds m, n, t, u, z: none acts while typing
    page.keyboard.press("Escape")
    assert page.input_value("#note") == NOTE
    page.keyboard.press("m")
    page.wait_for_selector("text=Decision recorded: the item is resolved.")
    assert_focus_drawn_on(page, "next-item")
    shoot(page, shots, "item-keys-decided")

    # `z` undoes; the focus goes back to the decision, where the keys act again.
    page.keyboard.press("z")
    page.wait_for_selector("text=Withdrawn: your decision is taken back")
    assert_focus_drawn_on(page, "decide-h")
    page.keyboard.press("f")
    page.wait_for_selector("text=Decision recorded: the item is resolved.")
    assert_focus_drawn_on(page, "next-item")
    item = site.item(first)
    assert [(d["kind"], d["decision"]) for d in item["trail"]][-1] == ("decision", "faithful")

    # Go on: Enter on the focused link opens the next item.
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/review/items/{second}")

    # Every page, read by axe-core: no serious or critical violation.
    pages = {
        "sign-in": "/review/sign-in",
        "queue": "/review",
        "item-open": f"/review/items/{second}",
        "item-resolved": f"/review/items/{first}",
        "item-blind": f"/review/items/{blind}",
        "stats": "/review/stats",
        "error": "/review/stats?since=soon",
    }
    calibration = written_page(tmp_path).as_uri()
    found = {}
    for width in (1400, 800):  # contrast and layout at both widths; a screenshot of each
        page.set_viewport_size({"width": width, "height": 1000})
        for name, path in pages.items():
            page.goto(f"{site.base_url}{path}")
            page.wait_for_selector("h1")
            found[f"{name}-{width}"] = serious_violations(page)
            shoot(page, shots, f"axe-{name}")
        page.goto(calibration)
        found[f"calibration-{width}"] = serious_violations(page)
        shoot(page, shots, "axe-calibration")
    assert page.locator("#comparison").count() == 1  # the calibration page was read
    assert all(v == [] for v in found.values()), json.dumps(found, indent=1)

    # The check can fail: an unlabelled text box is a critical violation to axe.
    page.goto(f"{site.base_url}/review/stats")
    page.evaluate("document.querySelector('main').append(document.createElement('input'))")
    assert [v["id"] for v in serious_violations(page)] == ["label"]
