"""Every report page escapes and marks text from outside, whatever it holds: a script tag,
a bidi control, or Jinja's own `{{ }}` (data is never read as a template).

One hostile string goes everywhere outside text reaches: a model's name, a prompt version,
a reason, a tag, a filter and a judge's name in the summary report; a batch id, a batch's
name, a tag, a model, a reason and the title on the calibration and comparison pages."""

from __future__ import annotations

from datetime import UTC, datetime
from html import escape
from typing import Any

import pytest

from app.calibration.html import calibration_page
from app.calibration.tally import CalibrationTally, Call, LabelledScreening
from app.evidence.bidi_controls import BIDI_CONTROLS
from app.reports.html import summary_html
from app.reports.summary import Aggregates, summarize
from app.repositories.report_rows import ReviewRow, ScreeningRow, TagCount, TagCounts

AT = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HOSTILE = "<script>alert('x')</script>\u202e{{ 7*7 }}{% if 1 %}"
# What the page must show in its place: escaped as html.escape does (quotes included), the
# RLO as its marker, the template syntax as the text it is.
SHOWN = escape("<script>alert('x')</script>") + "⟨U+202E RLO⟩{{ 7*7 }}{% if 1 %}"


def assert_escaped(page: str, *places: str) -> None:
    """No tag or control got through, and each place shows the string as SHOWN (at `@`)."""
    assert "<script" not in page
    assert not any(control in page for control in BIDI_CONTROLS)
    for place in places:
        assert place.replace("@", SHOWN) in page, place


def review(sid: str, role: str, judge: str, **extra: Any) -> ReviewRow:
    fields: dict[str, Any] = {
        "purpose": "review", "model": HOSTILE, "prompt_version": HOSTILE, "verdict": "faithful",
        "parse_status": "ok", "latency_ms": 100, "usage": {}, "judge_name": judge,
    } | extra  # fmt: skip
    return ReviewRow(sid, role, 1, **fields)


def test_the_summary_report_escapes_model_prompt_reason_tag_filter_and_judge() -> None:
    screenings = [ScreeningRow("s1", "needs_review", [HOSTILE], None, False)]
    reviews = [
        review("s1", "translator", ""),
        review("s1", "judge", HOSTILE),
        review("s1", "judge", "b", verdict="mismatch"),
    ]
    tags = TagCounts(shown=[TagCount(HOSTILE, {"needs_review": 1})], total=1)
    summary = summarize(screenings, reviews, Aggregates(tags=tags))
    page = summary_html(summary, filters={HOSTILE: HOSTILE}, generated_at=AT)
    assert "<h2>Judges</h2>" in page  # the panel's section, with the judge's name, is there
    assert_escaped(
        page,
        "Filters: @ @.</p>",  # the filter's name and value
        "<h3>judge / @ / prompt @</h3>",  # a group: the judge's model and prompt version
        "<tr><td>@</td><td>@</td><td>1</td>",  # a judge's row: its name and model
        "<li>@/b: Cohen's kappa",  # a pair of judges
        "<tr><td>@</td><td>1</td></tr></table>\n<h2>Calls",  # the reason's row
        "<tr><td>@</td><td>1</td><td>0</td><td>0</td><td>1</td><td>",  # as decided
        "<tr><td>@</td><td>1</td><td>0</td><td>0</td><td>1</td></tr>",  # the tag's row
    )


def calibration(batch_id: str) -> dict[str, Any]:
    call = Call(
        role="translator", model=HOSTILE, prompt_version=HOSTILE, parser_version="contract-1",
        supplied=False, http_status=200, prompt_tokens=10, completion_tokens=5, latency_ms=9,
    )  # fmt: skip
    judge = Call(
        role="judge", model="j", prompt_version="p", parser_version="contract-1",
        supplied=False, http_status=200, prompt_tokens=10, completion_tokens=5, latency_ms=9,
        judge_name=HOSTILE, verdict="mismatch", parse_status="ok",
    )  # fmt: skip
    tally = CalibrationTally()
    for label in ("mismatch", "faithful"):
        tally.add(
            LabelledScreening(
                label=label, outcome="needs_review", reasons=(HOSTILE,), tags=(HOSTILE,),
                kind="theorem", confirmations=0, policy_version=HOSTILE,
                evidence_version="e", calls=(call, judge),
            )
        )  # fmt: skip
    return {"batch_id": batch_id, **tally.as_json()}


@pytest.mark.parametrize("compared", [False, True])
def test_the_calibration_and_comparison_pages_escape_ids_names_tags_models_and_reasons(
    compared: bool,
) -> None:
    from tests.unit.test_calibration_html import comparison_of

    comparison = comparison_of(a=HOSTILE, b="other") if compared else None
    page = calibration_page(
        calibration(HOSTILE),
        comparison,
        title=f"FaithScreen {HOSTILE}",
        names={HOSTILE: HOSTILE, "other": HOSTILE},
    )
    assert "<h2>By judge</h2>" in page and ('id="comparison"' in page) is compared
    places = [
        "<title>FaithScreen @</title>",
        "<h1>FaithScreen @</h1>",
        '<p class="meta">Batch @.</p>',
        '<tr><td class="wrap">@</td><td class="count">2</td><td>',  # the tag's slice
        '<tr><td class="wrap">@</td><td class="count">2</td></tr>',  # the reason
        '<td class="wrap">translator: @<br>judge: j</td>',  # the configuration's models
        '<span class="version">@</span>',  # the prompt and policy versions
        '<tr><td class="wrap">@</td><td class="wrap">j</td>',  # the judge's row
    ]
    if compared:
        named = "&quot;@&quot; (batch @)"
        other = "&quot;@&quot; (batch other)"
        places.append(f"<p>A: {named} (this page's batch)<br>B: {other}</p>")
        places.append(f'<h2 id="calibration">Calibration of {named}</h2>')
    assert_escaped(page, *places)
