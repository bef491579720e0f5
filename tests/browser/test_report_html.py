"""The HTML report written by the real `faithscreen report --html`, opened from a file://
URL in headless Chromium: no console or page error, no request beyond the file itself, no
dialog (a model named like a script stays text), every chart drawn with a size, and every
chart label shown whole inside its chart (never cut off)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.test_reports import T, seed_database
from tests.support.review_site import run_cli

if TYPE_CHECKING:
    from playwright.sync_api import ConsoleMessage, Dialog, Page, Request

pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.one_database("postgres")]

HOSTILE_MODEL = "<script>alert('model')</script>"
HOSTILE_PROMPT = '"><img src=x onerror=alert(1)>'
LONG_TAG = "source:a-very-long-tag-of-sixty-four-characters-to-break-its-label"[:64]
# A model with 12 screenings, each with an unreadable first call and a recovering format
# retry: its rates cover 10 cases or more, so they are drawn with their intervals.
MANY = [
    {"outcome": "passed", "batch": None, "model": "bulk-model", "prompt": "p3",
     "tags": ["bulk", LONG_TAG], "calls": [
        (T, "review", "invalid", "unclear", 12_000 + 100 * i),
        (T, "format_retry", "ok", "faithful", 900),
    ]}
    for i in range(12)
]  # fmt: skip
HOSTILE = {
    "outcome": "flagged", "batch": None, "model": HOSTILE_MODEL, "prompt": HOSTILE_PROMPT,
    "reasons": ["<b>reason</b>"], "calls": [(T, "review", "ok", "mismatch", 100)],
}  # fmt: skip
# Outcomes, reasons, readings, latency, the human rates, a rate chart for each of the five
# groups (judge, translator with t-model, t-model-2, bulk-model and the hostile one), the
# decisions on needs_review by reason, outcomes by tag and screenings per day.
CHARTS = 13
# bulk-model's format retry (12/12), retry recovered (12/12) and truncation (0/24).
INTERVALS = 3
BOXES = """
(selector) => Array.from(document.querySelectorAll(selector)).map((element) => {
  const box = element.getBoundingClientRect();
  return [box.width, box.height];
})
"""


class Watch:
    """Everything the page says went wrong, or asked for, while it loads."""

    def __init__(self, page: Page) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))
        page.on("request", self._request)
        page.on("dialog", self._dialog)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type in {"error", "warning"}:
            self.errors.append(f"console {message.type}: {message.text}")

    def _request(self, request: Request) -> None:
        self.requests.append(request.url)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()


# Each chart label: the whole label (its tooltip), the text its lines show, and whether the
# drawn text lies inside its chart.
LABELS = """
() => Array.from(document.querySelectorAll("svg.chart text.label")).map((label) => {
  const chart = label.closest("svg").getBoundingClientRect();
  const box = label.getBoundingClientRect();
  const lines = Array.from(label.querySelectorAll("tspan")).map((line) => line.textContent);
  const inside = box.left >= chart.left - 0.5 && box.right <= chart.right + 0.5;
  return [label.querySelector("title").textContent, lines.join(" "), inside];
})
"""


def written_report(database_url: str, folder: Path) -> Path:
    # Playwright's sync API keeps an event loop running in this thread: seed from another.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, seed_database(database_url, [*MANY, HOSTILE])).result()
    target = folder / "report.html"
    run_cli(database_url, "report", "--html", str(target))
    return target


def boxes(page: Page, selector: str) -> list[Any]:
    found: list[Any] = page.evaluate(BOXES, selector)
    return found


def test_the_html_report_opens_in_chromium_without_errors_and_draws_its_charts(
    browser_page: Page, database_url: str, tmp_path: Path, shots: Path
) -> None:
    report = written_report(database_url, tmp_path)
    page = browser_page
    watch = Watch(page)
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(shots / "report-1366.png"), full_page=True)

    assert watch.errors == [] and watch.dialogs == []
    assert watch.requests == [report.as_uri()]
    assert page.title() == "FaithScreen report"
    assert page.locator("script, img, link, iframe").count() == 0
    assert (
        f"translator / {HOSTILE_MODEL} / prompt {HOSTILE_PROMPT}"
        in page.locator("h3").all_inner_texts()
    )

    charts = boxes(page, "svg.chart")
    assert len(charts) == CHARTS
    assert all(width > 300 and height > 40 for width, height in charts), charts
    bars = boxes(page, "svg.chart rect.bar")
    assert len(bars) > CHARTS and all(w > 0 and h > 0 for w, h in bars), bars
    intervals = boxes(page, "svg.chart g.interval")
    assert len(intervals) == INTERVALS and all(w > 0 and h > 0 for w, h in intervals)
    body = page.inner_text("body")
    assert "100.0% (12/12, 95% CI 75.7-100.0%)" in body
    assert "n<10 (0/1)" in body

    labels = page.evaluate(LABELS)
    hostile = f"translator / {HOSTILE_MODEL} / prompt {HOSTILE_PROMPT}"
    assert {hostile, LONG_TAG, "translator / bulk-model / prompt p3"} <= {t for t, _, _ in labels}
    for whole, shown, inside in labels:
        assert shown.replace(" ", "") == whole.replace(" ", ""), (whole, shown)
        assert inside, whole


def test_the_report_fits_a_narrow_window_without_scrolling_sideways(
    browser_page: Page, database_url: str, tmp_path: Path, shots: Path
) -> None:
    report = written_report(database_url, tmp_path)
    page = browser_page
    page.set_viewport_size({"width": 700, "height": 900})
    page.goto(report.as_uri())
    page.screenshot(path=str(shots / "report-700.png"), full_page=True)
    scroll, client = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert scroll <= client
    # The charts scale down with the page instead of overflowing it.
    assert all(width <= 700 for width, _ in boxes(page, "svg.chart"))
