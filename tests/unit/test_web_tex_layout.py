"""Text-mode LaTeX in an informal statement: the common commands laid out as HTML from an
allowlist (lists, emphasis, breaks, ties, dashes, quotes), every character of user text
escaped, and a structure that does not hold shown as the source; the queue preview's plain
text. Pure."""

from __future__ import annotations

import re

import pytest

from app.web.math_text import plain_text, render, tex_plain
from app.web.queue_view import one_line

PUTNAM = (
    "Define $S_0$ to be $1$. Prove\n\\begin{enumerate}\n"
    "\\item[(a)] $S_{n+1}=S_n+nS_{n-1}$\n"
    "\\item[(b)] \\emph{the} generating function is \\textbf{$\\exp(x)$}.\n"
    "\\end{enumerate}\nDone."
)


def html(text: str) -> str:
    return str(render(text).html)


def test_a_putnam_list_becomes_an_ordered_list_with_its_labels_and_formulas() -> None:
    shown = render(PUTNAM)
    out = str(shown.html)
    assert out.count("<ol") == 1 and out.count("<li") == 2 and out.count("</li>") == 2
    assert re.findall(r'<span class="item-label">([^<]*)</span>', out) == ["(a)", "(b)"]
    assert '<em class="tex-emph">the</em>' in out
    assert re.search(r'<strong class="tex-textbf"><span class="tex"[^>]*><math', out)
    assert "\\" not in re.sub(r'title="[^"]*"', "", out)  # no command shows as source
    assert out.endswith("</ol>Done.")  # no blank line left where the source had newlines
    assert shown.converted == 4 and shown.formatted == 6


def test_items_without_labels_line_breaks_ties_dashes_and_quotes() -> None:
    out = html("A~B, x--y, a---b, ``q'' and f''\\\\ next $x$ \\{1\\}")
    assert "A\u00a0B" in out and "x–y" in out and "a—b" in out and "“q”" in out
    assert "f&#39;&#39;" in out  # a lone '' is a double prime, not a closing quote
    assert "<br>next" in out and "{1}" in out
    bullets = html("\\begin{itemize}\n\\item one\n\\item two\n\\end{itemize}")
    assert bullets == '<ul class="tex-list itemize"><li>one</li><li>two</li></ul>'


def test_a_statement_with_no_latex_keeps_its_tildes_and_dashes() -> None:
    assert html("about ~5 -- or ``so''") == "about ~5 -- or ``so&#39;&#39;"
    assert render("about ~5").formatted == 0


@pytest.mark.parametrize(
    "hostile",
    [
        "\\textbf{<script>alert(1)</script>}",
        "\\emph{<img src=x onerror=alert(1)>}",
        "\\begin{enumerate}\\item[<script>] x\\end{enumerate}",
        '\\begin{itemize}\\item \\texttt{" onmouseover="alert(1)}\\end{itemize}',
        "{\\em <iframe src=javascript:alert(1)>}",
        "\\textbf{$x$<script>}",
    ],
)
def test_hostile_text_inside_a_command_stays_inert(hostile: str) -> None:
    out = html(hostile)
    tags = re.findall(r"<(/?[a-z]+)", out)
    allowed = {"strong", "em", "code", "ol", "ul", "li", "span", "math", "mrow", "mi"}
    assert {tag.lstrip("/") for tag in tags} <= allowed
    assert "<script" not in out and "<img" not in out and "<iframe" not in out
    assert "onmouseover=" not in out.replace("&#34; onmouseover=&#34;", "")
    assert "&lt;" in out or "&#34;" in out


@pytest.mark.parametrize(
    "broken",
    [
        "\\item x",  # an item outside a list
        "\\begin{enumerate}\\item x",  # a list left open
        "\\textbf{open",  # an argument left open
        "\\begin{itemize}\\item \\textbf{a \\end{itemize}}",  # closed across a list
        "\\begin{enumerate}text before any item\\item x\\end{enumerate}",
        "\\begin{enumerate}\\item x\\end{itemize}",
    ],
)
def test_a_structure_that_does_not_hold_is_shown_as_written(broken: str) -> None:
    shown = render(broken)
    assert shown.formatted == 0
    assert str(shown.html) == broken.replace('"', "&#34;")


def test_other_environments_commands_and_stray_braces_stay_as_written() -> None:
    assert html("\\begin{center}x\\end{center}") == "\\begin{center}x\\end{center}"
    assert html("\\foo{bar} a } b { c") == "\\foo{bar} a } b { c"
    assert html("the set {1, 2}") == "the set {1, 2}"


def test_raw_tex_the_converter_refuses_is_never_laid_out() -> None:
    out = html("$\\phantom{\\textbf{x}}$ and \\textbf{y}")
    assert out.startswith("$\\phantom{\\textbf{x}}$ and ")  # the formula as written
    assert out.endswith('<strong class="tex-textbf">y</strong>')


def test_the_plain_text_lays_out_the_commands_and_shortens_formulas() -> None:
    assert tex_plain("\\frac{n(n+1)}{2} \\le \\sqrt{x}, x \\in \\mathbb{N}") == (
        "(n(n+1))/2 ≤ √x, x ∈ ℕ"
    )
    assert tex_plain("\\{1, 2\\} \\subseteq \\mathbb{Z}") == "{1, 2} ⊆ ℤ"
    flat = one_line(PUTNAM)
    assert flat == "Define S₀ to be 1. Prove (a) Sₙ₊₁=Sₙ+nSₙ₋₁ (b) the generating " + (
        "function is exp(x). Done."
    )
    assert plain_text("\\item <b>") == "\\item <b>"  # as written when it does not hold
