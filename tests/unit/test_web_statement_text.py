"""The item page's statement text: TeX to MathML through an allowlist, and evidence spans
marked in the Lean, both pure."""

from __future__ import annotations

import re

import pytest

from app.api.schemas import EvidenceOut
from app.web.marked_text import Mark, marked, numbered
from app.web.math_text import parts, render
from app.web.pair_view import pair_view
from app.web.queue_view import PREVIEW_CHARS, one_line

# ---- TeX ------------------------------------------------------------------------------------


def test_inline_and_display_tex_become_mathml_and_plain_text_stays_escaped() -> None:
    shown = render("If $a<b$ then \\[\\frac{a}{2} < b\\] & <b>bold</b>.")
    html = str(shown.html)
    assert shown.converted == 2
    assert '<math display="inline"><mrow><mi>a</mi><mo>&lt;</mo><mi>b</mi></mrow></math>' in html
    assert '<math display="block">' in html and "<mfrac>" in html
    assert html.endswith(" &amp; &lt;b&gt;bold&lt;/b&gt;.")
    assert "xmlns" not in html  # written again from the tree, not copied


@pytest.mark.parametrize(
    "tex",
    [
        # latex2mathml copies \text through unescaped: an element outside the allowlist.
        r"$\text{<script>alert(1)</script>}$",
        r"$\text{<img src=x onerror=alert(1)>}$",
        # Hides part of the statement from the reader.
        r"$\phantom{n > 0}$",
    ],
)
def test_what_the_allowlist_cannot_vouch_for_is_shown_as_raw_tex(tex: str) -> None:
    shown = render(tex)
    assert shown.converted == 0
    assert "<math" not in str(shown.html) and "<script" not in str(shown.html)
    assert "<img" not in str(shown.html)
    assert str(shown.html).startswith("$")


@pytest.mark.parametrize(
    ("tex", "gone"),
    [
        (r"$\href{javascript:alert(1)}{x}$", "href"),
        (r"$\style{color:white}{x}$", "style"),
        (r"$\color{white}{x}$", "mathcolor"),
        (r"$\hspace{-30cm}x$", "width"),
    ],
)
def test_attributes_that_link_restyle_hide_or_push_text_are_dropped(tex: str, gone: str) -> None:
    shown = render(tex)
    assert shown.converted == 1
    mathml = str(shown.html).partition("<math")[2]  # the span's title quotes the TeX itself
    assert gone not in mathml
    assert "<mi>x</mi>" in mathml


def test_small_spaces_are_kept() -> None:
    assert '<mspace width="1em">' in str(render(r"$a \quad b$").html)


@pytest.mark.parametrize(
    "text",
    [
        "It costs $5 and\nthen $10.",  # `$` over a line break is no formula
        "a $ b",  # no closer
        "$$",
        "\\$5 and \\$6",  # escaped dollars
        "$" * 5000,
    ],
)
def test_dollars_that_are_not_mathematics_stay_text(text: str) -> None:
    shown = render(text)
    assert shown.converted == 0
    assert "<math" not in str(shown.html)


def test_the_parts_give_the_text_back_and_an_escaped_dollar_does_not_close() -> None:
    text = r"Let $a \$ b$ and \(x\), $$y$$ \[z\] end"
    found = parts(text)
    assert "".join(p.source if p.tex else p.text for p in found) == text
    assert [(p.text, p.display) for p in found if p.tex] == [
        (r"a \$ b", False),
        ("x", False),
        ("y", True),
        ("z", True),
    ]


def test_a_tex_part_past_the_size_cap_stays_raw() -> None:
    long = "$" + "x+" * 1500 + "x$"
    assert render(long).converted == 0


# ---- Spans ----------------------------------------------------------------------------------


def mark(line: int, column: int, end: int, index: int = 1) -> Mark:
    return Mark(line, column, end, index, f"finding {index}", "severity-review")


def test_a_span_is_marked_on_its_line_and_the_text_is_written_back_exactly() -> None:
    text = "theorem t (n : ℕ) :\n  n < n + 1 := by sorry"
    html = str(marked(text, [mark(2, 2, 9)]))
    assert '<mark class="span severity-review" data-findings="1" title="finding 1">' in html
    assert re.sub(r"<[^>]+>", "", html) == text.replace("<", "&lt;")
    assert ">n &lt; n +</mark> 1 :=" in html  # columns 2-8: end_column is exclusive


def test_overlapping_spans_split_where_they_meet() -> None:
    html = str(marked("abcdef", [mark(1, 0, 4, 1), mark(1, 2, 6, 2)]))
    assert re.findall(r'data-findings="([^"]+)"[^>]*>([^<]*)<', html) == [
        ("1", "ab"),
        ("1 2", "cd"),
        ("2", "ef"),
    ]


def test_spans_past_the_line_or_on_a_missing_line_mark_only_what_exists() -> None:
    assert str(marked("abc", [mark(1, 1, 99)])).endswith(">bc</mark>")
    assert str(marked("abc", [mark(7, 0, 2), mark(1, 3, 5), mark(1, 2, 2)])) == "abc"


def test_numbered_lines_carry_their_source_line_and_indent_and_add_no_character() -> None:
    text = "theorem t :\n    a <\n\nb"
    html = str(numbered(text, [mark(2, 4, 5)]))
    assert re.findall(r'data-line="(\d+)"', html) == ["1", "2", "3", "4"]
    assert '<span class="ln" data-line="2" style="--in: 4ch">    <mark' in html
    assert re.sub(r"<[^>]+>", "", html) == text.replace("<", "&lt;")
    assert numbered("", []) == '<span class="ln" data-line="1"></span>'


def test_the_pair_view_marks_each_finding_in_its_own_field_and_says_where() -> None:
    evidence = [
        EvidenceOut(
            code="nat_division",
            message="ℕ division truncates",
            severity="review",
            field="formal",
            line=1,
            column=4,
            end_column=9,
        ),
        EvidenceOut(code="check_failed", message="a check failed", severity="review"),
        EvidenceOut(
            code="x", message="in the header", severity="flag", field="header", line=1, column=0
        ),
    ]
    view = pair_view("n / 2", "def f := n / 2", "import Mathlib", evidence)
    assert '<mark class="span severity-review" data-findings="1"' in str(view.formal)
    assert ">f := </mark>" in str(view.formal)
    assert ">import Mathlib</mark>" in str(view.header)  # no end: the rest of the line
    assert "<mark" not in str(view.informal_raw)
    assert [e.marked for e in view.evidence] == [True, False, True]
    assert [e.where for e in view.evidence] == [
        "formal, line 1, columns 5-9",
        None,
        "header, line 1, column 1",
    ]


# ---- Queue ----------------------------------------------------------------------------------


def test_the_queue_preview_is_one_line_and_cut() -> None:
    assert one_line("Show that\n\n  x  >  0.") == "Show that x > 0."
    cut = one_line("word " * 100)
    assert len(cut) <= PREVIEW_CHARS
    assert cut.endswith("…") and "\n" not in cut


def test_quotes_are_escaped_as_jinja_escapes_them() -> None:
    assert str(marked("a 'b' \"c\" <d>", [])) == "a &#39;b&#39; &#34;c&#34; &lt;d&gt;"
    assert str(render("it's $x$").html).startswith("it&#39;s <span")
