"""The review workbench in headless Chromium at 1400x1000 and 800x1000 (and the item page
at 390 px): the informal statement and the Lean side by side and as tall from 1200px
(stacked below, the decision right after the pair), TeX as MathML and text-mode LaTeX
(lists, emphasis, breaks) as HTML with a raw toggle, the Lean numbered by source line and
a long line soft-wrapped under a hanging indent (nothing clipped), a reply that could not
be read shown open, evidence findings a button away from their span, and the queue list
fitting the page with its previews as plain text, batch names, totals and reason choice.
Screenshots go to FAITHSCREEN_SHOTS (default: pytest's tmp dir) for a person to look at."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.review_site import INFORMAL, ReviewSite, pair_body

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("sqlite")]

WIDE = {"width": 1400, "height": 1000}
NARROW = {"width": 800, "height": 1000}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = [pytest.param(WIDE, id="1400"), pytest.param(NARROW, id="800")]
TEX_INFORMAL = (
    "Show that $\\sum_{i=0}^{n} i = \\frac{n(n+1)}{2}$ for every natural number $n$, "
    "and that \\[\\lfloor x / 2 \\rfloor \\le x\\] for all $x \\in \\mathbb{N}$. "
    "\\textbf{Prove} both:\n\\begin{enumerate}\n"
    "\\item[(a)] the sum~formula, \\emph{without} induction;\\\\ then\n"
    "\\item[(b)] the floor bound.\n\\end{enumerate}"
)
# Three lines, the second far wider than any box on the page.
LONG_FORMAL = (
    "theorem workbench (n : ℕ) (h₀ : 0 < n) :\n"
    "    ∑ i ∈ Finset.range (n + 1), (i : ℝ) = n * (n + 1) / 2 ∧ ∀ m : ℕ, m ≤ n → "
    "⌊(m : ℝ) / 2⌋ ≤ m ∧ (m : ℝ) ^ 2 ≤ (n : ℝ) ^ 2 + 2 * (n : ℝ) * (m : ℝ) + 1 := by\n"
    "  sorry"
)
LONG_ID = "putnam_1987_b4_" + "variant_with_a_very_long_identifier_" * 3
BOX = "(s) => { const b = document.querySelector(s).getBoundingClientRect(); return [b.x, b.y, b.width, b.height]; }"  # noqa: E501
SCROLLS = "(s) => { const e = document.querySelector(s); return [e.scrollWidth, e.clientWidth]; }"
# Each source line's number, its height in rows, and where its first and last rows start.
LEAN_LINES = """
(s) => [...document.querySelectorAll(s + ' .ln')].map((line) => {
  const range = document.createRange();
  range.selectNodeContents(line);
  const rows = [...range.getClientRects()].filter((r) => r.width > 0);
  const height = parseFloat(getComputedStyle(line).lineHeight);
  return [line.dataset.line, Math.round(line.getBoundingClientRect().height / height),
          rows.length ? Math.round(rows[0].left) : 0,
          rows.length ? Math.round(rows[rows.length - 1].left) : 0];
})
"""


def shots_dir(fallback: Path) -> Path:
    folder = Path(os.environ.get("FAITHSCREEN_SHOTS", str(fallback)))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Page, shots: Path, name: str) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    page.screenshot(path=str(shots_dir(shots) / f"{name}-{width}.png"), full_page=True)


def sign_in(page: Page, site: ReviewSite, key: str) -> None:
    page.goto(f"{site.base_url}/review/sign-in")
    page.fill("#key", key)
    page.click("button:has-text('Sign in')")
    page.wait_for_selector("h1")


def box(page: Page, selector: str) -> list[float]:
    found: list[float] = page.evaluate(BOX, selector)
    return found


def seed_tex_item(site: ReviewSite, marker: str, **extra: Any) -> int:
    body = {"informal": TEX_INFORMAL, "formal": LONG_FORMAL.replace("workbench", marker)}
    return site.seed(marker, **(body | extra))


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_workbench_lays_the_pair_out_for_the_width(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    item_id = seed_tex_item(site, "workbench")
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/items/{item_id}")
    shoot(page, shots, "item-workbench")

    informal, lean, decide = box(page, ".informal"), box(page, ".lean"), box(page, ".decide")
    if viewport is WIDE:
        assert informal[1] == lean[1] == decide[1]  # one row: side by side
        assert informal[0] < lean[0] < decide[0]
    else:
        assert informal[1] < lean[1] < decide[1]  # stacked, the decision after the pair
        assert informal[0] == lean[0] == decide[0]
        assert decide[1] < box(page, "#reviews-h")[1]
    # The back-translation sits right under the Lean, in its column.
    back = box(page, "#back-translations")
    assert back[0] == lean[0] and back[1] > box(page, "#lean-formal")[1]
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

    # The informal statement and the Lean are as tall, side by side.
    if viewport is WIDE:
        assert abs(informal[3] - lean[3]) < 1

    # The Lean: exact text, numbered by source line; the long line wraps under a hanging
    # indent (its later rows start further right), so nothing is cut at the box's edge.
    assert page.inner_text("#lean-formal") == LONG_FORMAL
    scroll_width, client_width = page.evaluate(SCROLLS, "#lean-formal")
    assert scroll_width <= client_width
    lines = page.evaluate(LEAN_LINES, "#lean-formal")
    assert [line[0] for line in lines] == ["1", "2", "3"]
    assert lines[0][1] == 1 and lines[2][1] == 1
    assert lines[1][1] >= 2 and lines[1][3] > lines[1][2]  # wrapped, hanging indent
    wrap_mark = "getComputedStyle(document.querySelector('#lean-formal .ln')).backgroundImage"
    assert page.evaluate(wrap_mark).startswith("linear-gradient")  # the continuation bar

    # TeX as MathML and text-mode LaTeX as HTML, a toggle away from the raw text.
    assert page.locator("#informal math").count() == 4
    assert page.locator("#informal math[display=block]").count() == 1
    assert page.locator("#informal ol > li").count() == 2
    assert page.locator("#informal .item-label").all_inner_texts() == ["(a)", "(b)"]
    assert page.inner_text("#informal strong") == "Prove"
    assert page.inner_text("#informal em") == "without"
    assert page.locator("#informal br").count() == 1
    shown = page.inner_text("#informal")
    assert "\\" not in shown and "~" not in shown and "sum\u00a0formula" in shown
    assert page.is_hidden("#informal-raw")
    page.click("#toggle-tex")
    assert page.is_visible("#informal-raw") and page.is_hidden("#informal")
    assert page.inner_text("#informal-raw") == TEX_INFORMAL
    shoot(page, shots, "item-raw-tex")
    page.click("#toggle-tex")
    assert page.is_visible("#informal math")

    # The back-translation folds away and opens again.
    page.click("#back-translations summary")
    assert not page.locator("#back-translations").evaluate("d => d.open")
    page.click("#back-translations summary")
    assert page.is_visible("#back-translations .statement")

    # The unreadable reply is open; the readable one is not; each names model and prompt.
    reviews = page.locator(".review")
    assert reviews.count() == 2
    opened = [reviews.nth(i).locator("details").evaluate("d => d.open") for i in range(2)]
    assert opened == [False, True]  # translator said UNCLEAR (ok); the judge unreadable
    assert "prompt" in reviews.nth(1).locator(".versions").inner_text()

    if viewport is NARROW:  # the item page on a phone: one column, nothing sideways
        page.set_viewport_size(PHONE)
        shoot(page, shots, "item-workbench")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        assert (
            page.evaluate(SCROLLS, "#lean-formal")[0] <= page.evaluate(SCROLLS, "#lean-formal")[1]
        )


def test_an_informal_statement_without_tex_offers_no_toggle(
    browser_page: Page, site: ReviewSite
) -> None:
    page = browser_page
    item_id = site.seed("plain_text")
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/items/{item_id}")
    assert page.inner_text("#informal") == INFORMAL
    assert page.locator("#toggle-tex").count() == 0


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_queue_lists_previews_batch_names_totals_and_a_reason_choice(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    informal = "A statement\nover $x \\in \\mathbb{N}$ two lines, \\emph{long} " * 6
    lone = site.seed("lone_pair", informal=informal, external_id=LONG_ID)
    items = [pair_body(f"batched_{i}") for i in range(2)]
    with site.api(site.admin) as api:
        made = api.post("/v1/batches", json={"items": items, "name": "Putnam 2024 sample"})
        assert made.status_code == 202, made.text
        claimed = api.post(f"/v1/queue/{lone}/claim")
        assert claimed.status_code == 200, claimed.text
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review")
    page.wait_for_selector("#queue")
    shoot(page, shots, "queue")

    rows = page.locator("#queue tbody tr")
    assert rows.count() == 3
    first = page.locator(f"#row-{lone}")
    ext = first.locator("td.ext")
    assert ext.get_attribute("title") == LONG_ID  # cut to its column, whole in the title
    assert ext.locator("li").evaluate("li => li.scrollWidth > li.clientWidth")
    assert "by root" in first.locator(".claimant").inner_text()
    preview = first.locator("td.preview")
    assert "\n" not in preview.inner_text()
    assert preview.inner_text().startswith("A statement over x ∈ ℕ two lines, long A")
    assert preview.evaluate("td => td.scrollWidth > td.clientWidth")  # cut to one line
    batch_cells = page.locator("#queue td.batch").all_inner_texts()
    assert batch_cells == ["—", "Putnam 2024 sample", "Putnam 2024 sample"]
    totals = {
        status: page.inner_text(f"#total-{status} .count")
        for status in ("open", "claimed", "awaiting_second", "disputed", "resolved")
    }
    assert totals == {
        "open": "2",
        "claimed": "1",
        "awaiting_second": "0",
        "disputed": "0",
        "resolved": "0",
    }
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    # Every column fits: the table is no wider than its box, the last header inside it.
    table, holder = box(page, "#queue"), box(page, ".table-box")
    assert table[0] + table[2] <= holder[0] + holder[2] + 1
    last = "th.queued" if viewport is WIDE else "th.batch"
    assert box(page, last)[0] + box(page, last)[2] <= holder[0] + holder[2] + 1

    options = page.locator("#reason option").all_inner_texts()
    assert options[0] == "any" and "judge_unreadable" not in options
    assert {"translator_unclear", "judge_missing", "evidence_review"} <= set(options)
    page.select_option("#reason", "judge_missing")
    page.click("button:has-text('Filter')")
    page.wait_for_url("**reason=judge_missing**")
    assert page.locator("#queue tbody tr").count() == 3  # every seeded judge is unreadable
    page.select_option("#reason", "judge_refused")
    page.click("button:has-text('Filter')")
    page.wait_for_selector("text=No queue item matches these filters.")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_the_stats_page_shows_each_persons_decisions(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    bodies = [
        {"decision": "faithful"},
        {"decision": "unsure", "note": "cannot tell"},
        {"decision": "mismatch", "defects": ["wrong_constant"]},
    ]
    with site.api(site.alice) as api:
        for number, body in enumerate(bodies):
            item_id = site.seed(f"stats_{number}")
            # Read first: time per item runs from the opening (never opened: not timed).
            assert api.get(f"/v1/queue/{item_id}").status_code == 200
            assert api.post(f"/v1/queue/{item_id}/claim").status_code == 200
            decided = api.post(f"/v1/queue/{item_id}/decision", json=body)
            assert decided.status_code == 201, decided.text
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/stats")
    page.wait_for_selector("#stats")
    shoot(page, shots, "review-stats")
    rows = page.locator("#stats tbody tr")
    assert rows.count() == 1
    cells = {
        name: rows.first.locator(f"td.{name}").inner_text()
        for name in ("actor", "decisions", "split", "unsure", "agreement", "withdrawn")
    }
    assert cells == {
        "actor": "alice",
        "decisions": "3",
        "split": "1 / 1 / 1",
        "unsure": "33%",
        "agreement": "—",
        "withdrawn": "0",
    }
    assert rows.first.locator("td.median").inner_text().endswith(" s")
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]

    page.goto(f"{site.base_url}/review/stats?since=2000-01-01&until=2000-01-02")
    page.wait_for_selector("text=No decision in this range.")
    page.goto(f"{site.base_url}/review/stats?since=soon")
    assert "since: a day as YYYY-MM-DD" in page.inner_text("main")
    shoot(page, shots, "error-page")


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_an_evidence_finding_is_highlighted_where_it_points_in_the_lean(
    browser_page: Page, site: ReviewSite, shots: Path, viewport: dict[str, int]
) -> None:
    page = browser_page
    page.set_viewport_size(viewport)
    formal = "theorem spans (a b : ℕ)\n    (h : a - b ≤ 4) : a ≤ b + 4 := by sorry"
    informal = "If the difference of a and b is at most 4, then a ≤ b + 4."
    item_id = site.seed("spans", formal=formal, informal=informal)
    sign_in(page, site, site.alice)
    page.goto(f"{site.base_url}/review/items/{item_id}")
    shoot(page, shots, "item-evidence-span")

    marks = page.locator("#lean-formal mark.span")
    assert marks.all_inner_texts() == ["a - b"]
    assert marks.first.get_attribute("title").startswith("truncating_subtraction: this “-”")
    assert page.inner_text("#lean-formal") == formal  # the marks add no character
    marked_line = page.evaluate(
        "() => document.querySelector('#lean-formal mark.span').closest('.ln').dataset.line"
    )
    assert marked_line == "2"
    listed = page.inner_text("#evidence")
    assert "truncating_subtraction" in listed and "(formal, line 2, columns 10-14)" in listed
    assert page.locator("#lean-header mark, #informal-raw mark").count() == 0

    # Listed under the Lean with its line, and a button (or `g`) that goes to the span.
    listed_here = page.locator("#span-list button.go-span")
    assert listed_here.all_inner_texts() == ["formal line 2 · truncating_subtraction"]
    listed_here.first.click()
    assert page.locator("#lean-formal mark.span.current").count() == 1
    page.evaluate(
        "document.querySelectorAll('mark.current').forEach(m => m.classList.remove('current'))"
    )
    page.locator("h1").click()
    page.keyboard.press("g")
    assert page.locator("#lean-formal mark.span.current").all_inner_texts() == ["a - b"]
