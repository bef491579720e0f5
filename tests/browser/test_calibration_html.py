"""The calibration page, with a comparison, written to a file and opened from a file:// URL
in headless Chromium: no console or page error, no request beyond the file itself, no
dialog (a model named like a script stays text), every chart drawn with a size, and no
sideways scrolling in a narrow window, however long a tag or a model name."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from app.calibration.html import calibration_page
from tests.browser.test_report_html import Watch, boxes
from tests.unit.test_calibration_html import HOSTILE_MODEL, LONG_TAG, batch_a, comparison_of

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = [pytest.mark.browser]

# A model name far wider than a narrow window, with nowhere to break it.
LONG_MODEL = "openrouter_" + "very_long_model_name_" * 8
# Outcomes by label, the rates, and A against B for false pass and false alarm.
CHARTS = 4
# False pass (12), false alarm (10), false flag (10) and automation (22) in the rates
# chart; A and B in each comparison chart. Flag and pass precision are over 9 cases.
INTERVALS = 4 + 2 * 2
# Elements whose content is wider than they are (text that would be cut or spill out).
OVERFLOWING = """
(selector) => Array.from(document.querySelectorAll(selector))
  .filter((element) => element.scrollWidth > element.clientWidth)
  .map((element) => element.textContent)
"""
BATCH_B = "2b0c6f0e-8c1e-4b8e-9f2d-5f9e1c0a7b3d"


def calibration() -> dict[str, Any]:
    body = batch_a(pending=2)
    second = body["configs"][0] | {"translator_model": LONG_MODEL, "count": 1}
    return body | {"configs": [*body["configs"], second]}


def written_page(folder: Path) -> Path:
    target = folder / "calibration.html"
    target.write_text(calibration_page(calibration(), comparison_of(b=BATCH_B)), "utf-8")
    return target


def test_the_calibration_page_opens_in_chromium_without_errors_and_draws_its_charts(
    browser_page: Page, tmp_path: Path, shots: Path
) -> None:
    written = written_page(tmp_path)
    page = browser_page
    watch = Watch(page)
    page.goto(written.as_uri())
    page.wait_for_load_state("load")
    page.screenshot(path=str(shots / "calibration-1366.png"), full_page=True)

    assert watch.errors == [] and watch.dialogs == []
    assert watch.requests == [written.as_uri()]
    assert page.title() == "FaithScreen calibration"
    assert page.locator("script, img, link, iframe").count() == 0
    body = page.inner_text("body")
    assert f"translator: {HOSTILE_MODEL}" in body and f"translator: {LONG_MODEL}" in body
    assert LONG_TAG in page.locator("td.wrap").all_inner_texts()
    assert "Partial: 2 labelled screenings are not done yet." in body
    assert page.locator("#comparison").count() == 1

    charts = boxes(page, "svg.chart")
    assert len(charts) == CHARTS
    assert all(width > 300 and height > 40 for width, height in charts), charts
    bars = boxes(page, "svg.chart rect.bar")
    assert len(bars) == 6 and all(w > 0 and h > 0 for w, h in bars), bars
    intervals = boxes(page, "svg.chart g.interval")
    assert len(intervals) == INTERVALS and all(w > 0 and h > 0 for w, h in intervals)
    assert "16.7% (2/12, 95% CI 4.7-44.8%)" in body and "n<10 (8/9)" in body


def test_the_calibration_page_fits_a_narrow_window_without_scrolling_sideways(
    browser_page: Page, tmp_path: Path, shots: Path
) -> None:
    written = written_page(tmp_path)
    page = browser_page
    page.set_viewport_size({"width": 700, "height": 900})
    page.goto(written.as_uri())
    page.screenshot(path=str(shots / "calibration-700.png"), full_page=True)
    scroll, client = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert scroll <= client
    # The charts scale down with the page instead of overflowing it, and so do the tables.
    assert all(width <= 700 for width, _ in boxes(page, "svg.chart"))
    assert all(width <= 700 for width, _ in boxes(page, "table"))
    # Long tags and model names wrap whole inside their cells: nothing is cut or hidden.
    overflowing = page.evaluate(OVERFLOWING, "td, th, p, h1, h2, h3")
    assert overflowing == []
