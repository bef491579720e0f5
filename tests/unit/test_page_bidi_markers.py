"""Bidi controls on every page (pure): the review page's statements show each as a visible
`<mark class="bidi">⟨U+202E RLO⟩</mark>`, every other `{{ }}` of the review templates, the
report and the calibration page as the plain marker, and none reaches the HTML as itself,
in text, in an attribute or in MathML."""

from __future__ import annotations

import re

import pytest
from markupsafe import Markup

from app.api.schemas import EvidenceOut
from app.calibration.html import calibration_page
from app.evidence.bidi_controls import BIDI_CONTROL, BIDI_CONTROLS
from app.page_text import escaped, escaped_plain, finalized, marker, unhidden
from app.reports.html import summary_html
from app.reports.pages import render_report
from app.reports.summary import summarize
from app.repositories.report_rows import ScreeningRow
from app.web.math_text import render
from app.web.pages import templates
from app.web.pair_view import pair_view
from app.web.queue_view import one_line
from tests.unit.test_calibration_html import batch_a, comparison_of
from tests.unit.test_report_html import AT, review

RLO = "\u202e"
TAGGED_RLO = '<mark class="bidi" title="U+202E RIGHT-TO-LEFT OVERRIDE">⟨U+202E RLO⟩</mark>'
EVERY = "".join(BIDI_CONTROLS)


def assert_no_control(html: str) -> None:
    assert BIDI_CONTROL.search(html) is None, [hex(ord(c)) for c in BIDI_CONTROL.findall(html)]


def test_each_control_has_a_marker_naming_its_code_point() -> None:
    assert marker(RLO) == "⟨U+202E RLO⟩"
    assert marker("\u061c") == "⟨U+061C ALM⟩"
    assert len({marker(control) for control in BIDI_CONTROLS}) == len(BIDI_CONTROLS)


def test_content_gets_a_mark_attributes_and_unknown_contexts_the_plain_marker() -> None:
    assert escaped(f"a <{RLO}b") == f"a &lt;{TAGGED_RLO}b"
    assert escaped_plain(f'"{RLO}') == "&#34;⟨U+202E RLO⟩"
    assert unhidden(f"<{RLO}>") == "<⟨U+202E RLO⟩>"  # nothing else is touched
    for shown in (escaped(EVERY), escaped_plain(EVERY), unhidden(EVERY)):
        assert_no_control(shown)


def test_finalize_keeps_markup_markup_and_leaves_other_values_alone() -> None:
    kept = finalized(Markup(f"<b>{RLO}</b>"))
    assert isinstance(kept, Markup) and kept == Markup("<b>⟨U+202E RLO⟩</b>")
    assert finalized(f"x{RLO}") == "x⟨U+202E RLO⟩" and finalized(7) == 7


def test_every_expression_of_the_review_templates_is_marked_in_text_and_attributes() -> None:
    page = templates.env.from_string('<p title="{{ x }}">{{ x }}</p>{{ m }}').render(
        x=f"note{RLO}<b>", m=Markup(f"<i>{RLO}</i>")
    )
    assert page == (
        '<p title="note⟨U+202E RLO⟩&lt;b&gt;">note⟨U+202E RLO⟩&lt;b&gt;</p><i>⟨U+202E RLO⟩</i>'
    )


def test_the_item_pages_statements_mark_every_control_where_it_stands() -> None:
    informal = f"Show that $a{RLO} < b$ and \u200f12 - 34 = -22."
    formal = f"theorem t (a b : ℕ) :\n  {RLO}b < a\u202c := by sorry"
    header = "import\u2066 Mathlib"
    finding = EvidenceOut(
        code="bidi_control", message="m", severity="review", field="formal",
        line=2, column=2, end_column=3,
    )  # fmt: skip
    view = pair_view(informal, formal, header, [finding])
    for html in (view.informal_math, view.informal_raw, view.formal, view.header):
        assert_no_control(str(html))
    # The finding's span covers the control, so the marker sits inside its highlight.
    assert f'data-findings="1" title="bidi_control: m">{TAGGED_RLO}</mark>b &lt; a' in view.formal
    assert "⟨U+202C PDF⟩</mark> := by sorry" in view.formal
    assert "⟨U+200F RLM⟩</mark>12 - 34" in view.informal_raw
    assert "⟨U+2066 LRI⟩</mark> Mathlib" in view.header


def test_tex_holding_a_control_is_shown_as_tex_with_the_control_marked() -> None:
    shown = render(f"Let $a{RLO} + b$ and $c + d$.")
    html = str(shown.html)
    assert shown.converted == 1  # `c + d` only
    assert f"Let $a{TAGGED_RLO} + b$ and" in html
    assert_no_control(html)


def test_a_formula_s_title_attribute_never_holds_a_tag_or_the_control() -> None:
    html = str(render(f"$x$ and \\[a \\text{{{RLO}}} b\\]").html)
    assert_no_control(html)
    titles = re.findall(r'title="([^"]*)"', html)
    assert titles and all("<" not in title for title in titles)


def test_a_list_label_in_text_mode_latex_is_marked() -> None:
    html = str(render(f"\\begin{{enumerate}}\\item[({RLO}a)] x\\end{{enumerate}}").html)
    assert f'<span class="item-label">({TAGGED_RLO}a)</span>' in html


def test_the_queue_preview_is_marked_by_the_template() -> None:
    preview = one_line(f"Show that {RLO}b < a.")
    rendered = templates.env.from_string("<td>{{ p }}</td>").render(p=preview)
    assert rendered == "<td>Show that ⟨U+202E RLO⟩b &lt; a.</td>"


@pytest.mark.parametrize("control", list(BIDI_CONTROLS))
def test_the_summary_report_marks_a_control_in_a_model_name(control: str) -> None:
    model = f"model{control}x"
    screenings = [ScreeningRow("a", "passed", [], None, False)]
    page = summary_html(
        summarize(screenings, [review("a", model=model)]),
        filters={"model": model},
        generated_at=AT,
    )
    assert_no_control(page)
    assert f"model{marker(control)}x" in page


def test_the_calibration_page_marks_controls_in_batch_ids_tags_and_models() -> None:
    calibration = batch_a() | {"batch_id": f"batch{RLO}"}
    calibration["by_tag"][f"tag{RLO}"] = calibration["by_tag"]["algebra"]
    page = calibration_page(calibration, comparison_of(a=f"a{RLO}", b="b\u2067"))
    assert_no_control(page)
    assert "batch⟨U+202E RLO⟩" in page and "tag⟨U+202E RLO⟩" in page
    assert "b⟨U+2067 RLI⟩" in page


def test_every_report_page_passes_through_one_exit_that_marks() -> None:
    svg = Markup(f"<svg><text>{EVERY}</text></svg>")
    page = render_report("report_page.html", title=f"title{RLO}", body=svg, extra_style="")
    assert_no_control(page)
    assert "<title>title⟨U+202E RLO⟩</title>" in page
