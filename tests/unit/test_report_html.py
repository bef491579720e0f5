"""The HTML report (pure: a summary in, one self-contained page out): known numbers, the
n<10 rule, escaping of data from users and providers, and nothing fetched from anywhere."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from datetime import UTC, datetime
from typing import Any

from app.reports.html import summary_html
from app.reports.summary import Summary, summarize
from app.repositories.report_rows import ReviewRow, ScreeningRow

AT = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)
HOSTILE_MODEL = "<script>alert('model')</script>"
HOSTILE_PROMPT = '"><img src=x onerror=alert(1)>'
HOSTILE_REASON = "judge_<b>mismatch</b>"


def review(screening_id: str, attempt: int = 1, **fields: Any) -> ReviewRow:
    values: dict[str, Any] = {
        "role": "translator", "purpose": "review", "model": "m", "prompt_version": "p",
        "verdict": "faithful", "parse_status": "ok", "latency_ms": 100, "usage": {},
    } | fields  # fmt: skip
    role = values.pop("role")
    return ReviewRow(screening_id, role, attempt, **values)


def twelve_screenings() -> Summary:
    """12 translator screenings of model m: the first 3 needed a format retry that
    recovered (unreadable first calls 100 ms, retries 50 ms); the others 400..1200 ms."""
    screenings = [ScreeningRow(f"s{i}", "passed", [], None, False) for i in range(12)]
    reviews = []
    for i in range(12):
        if i < 3:
            reviews.append(review(f"s{i}", parse_status="invalid", verdict="unclear"))
            reviews.append(review(f"s{i}", 2, purpose="format_retry", latency_ms=50))
        else:
            reviews.append(review(f"s{i}", latency_ms=100 * (i + 1)))
    return summarize(screenings, reviews)


def page_of(summary: Summary, filters: dict[str, str] | None = None) -> str:
    return summary_html(summary, filters=filters or {}, generated_at=AT)


def test_rates_over_ten_cases_show_share_counts_and_interval() -> None:
    page = page_of(twelve_screenings())
    assert "<td>format retry</td><td>25.0% (3/12, 95% CI 8.9-53.2%)</td>" in page
    assert "<td>retry recovered</td><td>n&lt;10 (3/3)</td>" in page
    assert "<td>truncation</td><td>0.0% (0/15, 95% CI 0.0-20.4%)</td>" in page
    # Nearest rank over 15 latencies (3 x 50, 3 x 100, 400..1200): p50 the 8th, p95 the 15th.
    assert "<td>latency ms</td><td>p50 500, p95 1200</td>" in page
    assert "<td>screenings</td><td>12</td>" in page and "<td>calls</td><td>15</td>" in page
    # format retry and truncation get a drawn interval; the 3-case cells do not.
    assert page.count('<g class="interval">') == 2


def test_a_cell_under_ten_cases_says_so_and_shows_no_share() -> None:
    rows = [ScreeningRow("a", "flagged", [], "mismatch", False)]
    page = page_of(summarize(rows, [review("a", parse_status="truncated", verdict="unclear")]))
    assert "<td>flagged precision</td><td>n&lt;10 (1/1)</td>" in page
    assert "<td>truncation</td><td>n&lt;10 (1/1)</td>" in page
    assert "100.0%" not in page
    assert '<g class="interval">' not in page


def test_model_names_prompts_reasons_and_filters_are_escaped() -> None:
    screenings = [ScreeningRow("a", "flagged", [HOSTILE_REASON], None, False)]
    reviews = [review("a", model=HOSTILE_MODEL, prompt_version=HOSTILE_PROMPT)]
    page = page_of(summarize(screenings, reviews), {"model": HOSTILE_MODEL, "batch": "a&b"})
    assert "<script" not in page.lower() and "<img" not in page and "<b>" not in page
    assert "&lt;script&gt;alert(&#x27;model&#x27;)&lt;/script&gt;" in page
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "judge_&lt;b&gt;mismatch&lt;/b&gt;" in page
    assert "Filters: model &lt;script&gt;" in page and "batch a&amp;b." in page


def test_every_chart_is_well_formed_markup() -> None:
    screenings = [ScreeningRow("a", "flagged", [HOSTILE_REASON], None, False)]
    reviews = [review("a", model=HOSTILE_MODEL + "x" * 80, prompt_version=HOSTILE_PROMPT)]
    page = page_of(summarize(screenings, reviews))
    charts = re.findall(r"<svg .*?</svg>", page, flags=re.DOTALL)
    # Outcomes, reasons, readings, latency, the group's rates, the human rates.
    assert len(charts) == 6
    for chart in charts:
        ElementTree.fromstring(chart)  # raises on a tag left open or text not escaped
    # A label too long for its column is broken into lines, never cut: all of it is shown.
    label = f"translator / {HOSTILE_MODEL}{'x' * 80} / prompt {HOSTILE_PROMPT}"
    assert "…" not in page
    shown = [
        "".join(ElementTree.fromstring(f"<text>{text}</text>").itertext())
        for text in re.findall(r'<text class="label"[^>]*><title>.*?</title>(.*?)</text>', page)
    ]
    assert label.replace(" ", "") in [text.replace(" ", "") for text in shown]


def test_nothing_is_fetched_from_anywhere() -> None:
    page = page_of(twelve_screenings())
    assert not re.search(r"(?i)https?:|//[a-z]|<script|<link|<img|src=|href=|url\(|@import", page)
    assert "default-src 'none'" in page


def test_the_header_names_the_filters_and_the_generation_time() -> None:
    page = page_of(twelve_screenings(), {"batch": "b1", "role": "judge"})
    assert "Generated 2025-03-04T05:06:07+00:00. Filters: batch b1, role judge." in page
    assert "12 finished screenings" in page
    assert "Filters: none (everything stored)." in page_of(twelve_screenings())


def test_outcome_bars_are_scaled_to_the_largest_count() -> None:
    rows = [
        ScreeningRow(str(i), "flagged" if i < 4 else "passed", [], None, False) for i in range(6)
    ]
    page = page_of(summarize(rows, []))
    bars = re.findall(r'width="([\d.]+)" height="18" fill="[^"]+"><title>(\w+): ', page)
    # needs_review has no screening, and no bar.
    assert {label: float(width) for width, label in bars} == {
        "passed": 190.0,
        "flagged": 380.0,
    }


def test_an_empty_report_still_renders() -> None:
    page = page_of(summarize([], []))
    assert "0 finished screenings" in page
    assert "No calls recorded." in page and "No reasons recorded." in page
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
