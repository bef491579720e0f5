"""The queue's one-line preview of TeX (issue 35, item 7): each formula is a readable plain
text rendering or the TeX as written, cut with an ellipsis, never a mix of the two (the
report: `∑_k=1^nbinomnk…`); and a binomial on the item page is set at full size."""

from __future__ import annotations

from app.web.math_text import render, tex_plain
from app.web.queue_view import PREVIEW_CHARS, one_line

REPORTED = "Prove that $\\sum_{k=1}^n \\binom{n}{k} = 2^n - 1$ for every $n \\ge 1$."


def test_the_reported_statement_reads_as_plain_text() -> None:
    assert one_line(REPORTED) == "Prove that ∑ₖ₌₁ⁿ C(n, k) = 2ⁿ - 1 for every n ≥ 1."


def test_scripts_and_fractions_read_whole() -> None:
    assert tex_plain("\\left(\\frac{1}{4}\\right)^{n+1}") == "(1/4)ⁿ⁺¹"
    assert tex_plain("a_{i,j}") == "a_(i,j)"  # no subscript comma: grouped instead
    assert tex_plain("x^{2y}") == "x²ʸ"
    assert tex_plain("x^{2q}") == "x^(2q)"  # no superscript q: grouped instead
    assert tex_plain("\\exp(x) + \\gcd(a, b)") == "exp(x) + gcd(a, b)"
    assert tex_plain("\\dbinom{2n}{n}") == "C(2n, n)"


def test_a_formula_it_cannot_read_stays_as_written_delimiters_and_all() -> None:
    assert tex_plain("\\foo{x} + 1") is None
    assert tex_plain("{n \\choose k}") is None  # a group left over
    flat = one_line("Let $\\foo{x} = 1$ and $y_1 = 2$.")
    assert flat == "Let $\\foo{x} = 1$ and y₁ = 2."
    assert "foox" not in flat and "binom" not in one_line(REPORTED)


def test_a_long_preview_is_cut_with_an_ellipsis() -> None:
    flat = one_line("$\\foo{x}$ " * 40)
    assert len(flat) == PREVIEW_CHARS and flat.endswith("…")
    assert flat.startswith("$\\foo{x}$ $\\foo{x}$")


def test_a_binomial_is_set_at_full_size_inline() -> None:
    html = str(render("$\\binom{n}{k}$").html)
    assert '<mfrac displaystyle="true" linethickness="0">' in html
    # A fraction keeps the converter's inline style.
    assert "displaystyle" not in str(render("$\\frac{1}{4}$").html)
