"""The evidence-5 checks: each fires on its shapes, stays silent on the near misses (each
near miss is what a looser rule would fire on), points its span at the right characters,
and stays bounded on hostile text."""

from __future__ import annotations

import pytest

from app.evidence import run_checks
from app.vocabulary import Pair, Severity
from tests.support.evidence_checks import findings, spanned

# --- narrower_number_type -------------------------------------------------------------


@pytest.mark.parametrize(
    ("informal", "formal", "name"),
    [
        # miniF2F amc12a_2019_p12 before its fix typed the reals `x y : ℕ`.
        (
            "Let $x$ and $y$ be positive real numbers.",
            "theorem t (x y : ℕ) (h : x > 0) : x + y = y + x := by sorry",
            "x",
        ),
        ("For real numbers $a, b$ show $a^2 + b^2 \\ge 2ab$.", "theorem t (a b : ℤ) : 1 = 1", "a"),
        (
            "Let $f: \\mathbb{R} \\to \\mathbb{R}$ be a function.",
            "theorem t (f : ℕ → ℝ) : 1 = 1",
            "f",
        ),
        (
            "Let $f:\\mathbb{Q}\\rightarrow\\mathbb{Q}$ satisfy",
            "theorem t (f : ℚ → ℤ) : 1 = 1",
            "f",
        ),
        ("Let $q$ and $r$ be rational numbers.", "theorem t (q r : ℤ) : q + r = r + q", "q"),
        ("Show that $x \\in \\mathbb{R}$ has $x^2 \\ge 0$.", "theorem t (x : ℚ) : x ^ 2 ≥ 0", "x"),
        ("Let $x_1$ be a real number.", "theorem t (x₁ : ℕ) : x₁ = x₁", "x₁"),
    ],
)
def test_narrower_number_type_fires_where_the_text_says_a_wider_type(
    informal: str, formal: str, name: str
) -> None:
    finding = findings("narrower_number_type", formal, informal)[0]
    assert finding.severity is Severity.REVIEW
    assert spanned(formal, finding) == name
    assert f"`{name}`" in finding.message


@pytest.mark.parametrize(
    ("informal", "formal"),
    [
        ("Let $x$ be a real number.", "theorem t (x : ℝ) : x = x"),  # the same type
        ("Let $n$ be a positive integer.", "theorem t (n : ℕ) : n = n"),  # ℕ holds it
        ("Let $n$ be a nonnegative integer.", "theorem t (n : ℕ) : n = n"),
        # an integer typed `ℕ` is not reported (primes, exponents, counts: see the module)
        ("Let $n$ be an integer. Show that $n^2 + n$ is even.", "theorem t (n : ℕ) : Even n"),
        ("Let $f: \\mathbb{Z}^+ \\to \\mathbb{Z}^+$ satisfy", "theorem t (f : ℕ → ℕ) : 1 = 1"),
        ("Let $f: \\mathbb{R}^2 \\to \\mathbb{R}$ be smooth.", "theorem t (f : ℕ → ℝ) : 1 = 1"),
        ("Let $f: \\mathbb{R} \\to \\mathbb{R}$ be a function.", "theorem t (f : ℝ → ℝ) : 1 = 1"),
        ("Let $n$ be an integer with $n \\geq 2$.", "theorem t (n : ℕ) : n = n"),
        ("Let $n$ be an integer greater than 1.", "theorem t (n : ℕ) : n = n"),
        # a count or a size, not the kind of the name: no verb declares it
        ("Let $S$ be a set of $n$ distinct real numbers.", "theorem t (n : ℕ) : n = n"),
        ("Let $Q$ be an $n$-by-$n$ real matrix.", "theorem t (n : ℕ) : n = n"),
        ("Let $f(x)$ be a real function.", "theorem t (x : ℕ) : x = x"),
        # written with two types, or with one the text does not declare
        ("Let $x$ be a real number.", "theorem t (x : ℕ) (h : ∀ x : ℝ, x = x) : x = x"),
        ("Let $x$ be a real number.", "theorem t (y : ℕ) : y = y"),
        # declared twice with different kinds: the text itself is unclear
        ("Let $x$ be a real number. Let $x$ be an integer.", "theorem t (x : ℕ) : x = x"),
    ],
)
def test_narrower_number_type_is_silent_on_near_misses(informal: str, formal: str) -> None:
    assert findings("narrower_number_type", formal, informal) == []


# --- range_offset -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("informal", "formal", "span"),
    [
        (
            "Show that $\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$.",
            "theorem t (n : ℕ) : ∑ k in Finset.range n, k = n * (n + 1) / 2 := by sorry",
            "Finset.range n",
        ),
        (
            "Compute $\\prod_{i = 0}^{10} (i + 2)$.",
            "theorem t : ∏ i ∈ Finset.range 10, (i + 2) = 0 := by sorry",
            "Finset.range 10",
        ),
        (
            "Show $\\sum_{k=1}^{n + 1} (x - k)$ is even.",
            "theorem t (n x : ℕ) : Even (∑ k ∈ Finset.range (n + 1), (x - k)) := by sorry",
            "Finset.range (n + 1)",
        ),
    ],
)
def test_range_offset_fires_on_a_range_one_short(informal: str, formal: str, span: str) -> None:
    (finding,) = findings("range_offset", formal, informal)
    assert spanned(formal, finding) == span
    assert "Finset.Icc 1" in finding.message


@pytest.mark.parametrize(
    ("informal", "formal", "span", "left_out"),
    [
        (
            "$\\sum_{k=2}^{n} k^2$",
            "theorem t (n : ℕ) : ∑ k ∈ Finset.Ico 2 n, k ^ 2 = 0",
            "Finset.Ico",
            "last",
        ),
        ("$\\prod_{i=1}^{n+1} a_i$", "theorem t : ∏ i ∈ Ioc 1 (n + 1), a i = 0", "Ioc", "first"),
        (
            "$\\sum_{j=0}^{9} j$",
            "theorem t : ∑ j in Finset.Ioo 0 9, j = 45",
            "Finset.Ioo",
            "first and last",
        ),
    ],
)
def test_range_offset_fires_on_an_interval_open_at_a_said_end(
    informal: str, formal: str, span: str, left_out: str
) -> None:
    (finding,) = findings("range_offset", formal, informal)
    assert spanned(formal, finding) == span
    assert f"leaves out the {left_out} term" in finding.message


@pytest.mark.parametrize(
    ("informal", "formal"),
    [
        # shifted bodies cover 1..n
        ("$\\sum_{k=1}^{n} k$", "theorem t (n : ℕ) : ∑ k in Finset.range n, (k + 1) = n := sorry"),
        ("$\\sum_{k=1}^{n} k$", "theorem t (n : ℕ) : ∑ k in Finset.range n, (1 + k) = n := sorry"),
        # the faithful forms
        ("$\\sum_{k=1}^{n} k$", "theorem t (n : ℕ) : ∑ k in Finset.Icc 1 n, k = n := sorry"),
        ("$\\sum_{k=0}^{n} k$", "theorem t (n : ℕ) : ∑ k in Finset.range (n + 1), k = n := sorry"),
        # another bound, or no informal bounds at all
        ("$\\sum_{k=1}^{m} k$", "theorem t (n : ℕ) : ∑ k in Finset.range n, k = n := sorry"),
        ("the sum of the first n numbers", "theorem t (n : ℕ) : ∑ k in Finset.range n, k = n"),
        # a lower bound other than 0 or 1 is another shape
        ("$\\sum_{k=2}^{n} k$", "theorem t (n : ℕ) : ∑ k in Finset.range n, k = n := sorry"),
        # the index only renumbers a sequence: n terms either way
        (
            "$\\sum_{i=1}^n a_i = n$",
            "theorem t (a : ℕ → ℝ) (n : ℕ) : ∑ i in Finset.range n, a i = n",
        ),
        # another operator or another index than the text's bound belongs to
        ("$\\sum_{k=0}^n x^k$", "theorem t (n : ℕ) : ∏ k ∈ Finset.range n, (x - k) = 0"),
        ("$\\sum_{k=0}^n x^k$", "theorem t (n : ℕ) : ∑ i ∈ Finset.range n, (x - i) = 0"),
        # closed intervals, or open ones at bounds the text does not write
        ("$\\sum_{k=2}^{n} k$", "theorem t (n : ℕ) : ∑ k ∈ Finset.Icc 2 n, k = 0 := sorry"),
        ("$\\sum_{k=2}^{n} k$", "theorem t (n : ℕ) : ∑ k ∈ Finset.Ico 2 (n + 1), k = 0 := sorry"),
        ("$\\sum_{k=2}^{n} k$", "theorem t (n : ℕ) : ∑ k ∈ Finset.Ioc 1 n, k = 0 := sorry"),
        # `range` not bound by a big operator
        ("$\\sum_{k=1}^{n} k$", "theorem t (n : ℕ) : (Finset.range n).card = n := sorry"),
    ],
)
def test_range_offset_is_silent_on_near_misses(informal: str, formal: str) -> None:
    assert findings("range_offset", formal, informal) == []


# --- contradictory_hypotheses ---------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "span"),
    [
        ("theorem t (x : ℝ) (h₀ : 0 < x) (h₁ : x < 0) : x = 1 := by sorry", "0"),
        ("theorem t (n : ℕ) (h₀ : 1 < n ∧ n < 2) : n = 5 := by sorry", "1"),
        ("theorem t (x : ℝ) (h₀ : x = 2) (h₁ : x = 3) : False := by sorry", "x"),
        ("theorem t (x : ℝ) (h₀ : 0 ≤ x ≤ 1) (h₁ : x > 1) : False := by sorry", "0"),
        ("theorem t (x : ℝ) (h₀ : (x ≥ -1)) (h₁ : x < -1) : False := by sorry", "x"),
        ("theorem t (x : ℝ) (h₀ : 1.5 < x ∧ x < 1.5) : False := by sorry", "1.5"),
    ],
)
def test_contradictory_hypotheses_fires_on_empty_bounds(formal: str, span: str) -> None:
    (finding,) = findings("contradictory_hypotheses", formal)
    assert spanned(formal, finding) == span
    assert "vacuous" in finding.message


@pytest.mark.parametrize(
    ("formal", "span"),
    [
        # miniF2F mathd_numbertheory_247 before its fix wrote 3n ≡ 2 (mod 11) so.
        ("theorem t (n : ℕ) (h₀ : (3 * n) % 2 = 11) : n % 11 = 8 := by sorry", "("),
        ("theorem t (n : ℤ) (h₀ : 5 = n % 5) : False := by sorry", "5"),
        ("theorem t (n : ℕ) (h₀ : 0 < n ∧ n % 7 = 7) : False := by sorry", "n"),
    ],
)
def test_contradictory_hypotheses_fires_on_a_remainder_past_its_modulus(
    formal: str, span: str
) -> None:
    (finding,) = findings("contradictory_hypotheses", formal)
    assert spanned(formal, finding) == span
    assert "vacuous" in finding.message


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (x : ℝ) (h₀ : 0 < x ∧ x < 1) : x < 2 := by sorry",
        "theorem t (x : ℝ) (h₀ : 1 < x ∧ x < 2) : x = 5 := by sorry",  # in ℝ there is room
        "theorem t (x : ℝ) (h₀ : -1 ≤ x ∧ x ≤ -1) : x = -1 := by sorry",  # one point
        "theorem t (x : ℝ) (h₀ : 0 ≤ x) (h₁ : x ≤ 0) : x = 0 := by sorry",
        "theorem t (x : ℝ) (h₀ : 0 < x ∨ x < 0) : x ≠ 0 := by sorry",  # a disjunction
        "theorem t (x : ℝ) (h₀ : 0 < x) : x < 0 → False := by sorry",  # the conclusion
        "theorem t (x : ℝ) (h₀ : ∀ y, 0 < y) (h₁ : x < 0) : False := by sorry",
        "theorem t (x y : ℝ) (h₀ : 0 < x + y) (h₁ : x + y < 0) : False := by sorry",
        "theorem t (x : ℕ → ℝ) (h₀ : 0 < x 1) (h₁ : x 2 < 0) : False := by sorry",
        "theorem t (n : ℕ) (h₀ : (3 * n) % 11 = 2) : n % 11 = 8 := by sorry",  # below m
        "theorem t (n : ℕ) (h₀ : n % 0 = 5) : False := by sorry",  # `n % 0 = n`
        "theorem t (n m : ℕ) (h₀ : n % m = 11) : False := by sorry",  # m unknown
        "theorem t (n : ℕ) : n % 2 = 11 → False := by sorry",  # the conclusion
        "theorem t (n : ℕ) (h₀ : n % 2 + 9 = 11) : False := by sorry",
    ],
)
def test_contradictory_hypotheses_is_silent_on_near_misses(formal: str) -> None:
    assert findings("contradictory_hypotheses", formal) == []


# --- hostile input ----------------------------------------------------------------------

NEW = ("narrower_number_type", "range_offset", "contradictory_hypotheses")


@pytest.mark.parametrize(
    ("informal", "formal"),
    [
        ("$x$ " * 20_000 + "be real numbers", "theorem t (x : ℕ) : x = x"),
        ("$x$ be" + " " * 60_000 + "real", "theorem t (x : ℕ) : x = x"),
        ("\\sum_{k=1}^{n} " * 5_000, "theorem t : " + "∑ k in Finset.range n, " * 5_000 + "k"),
        ("", "theorem t (x : ℝ) " + "(h : 0 < x ∧ x < 0 ∧ " * 10_000 + "x = x"),
        ("", "theorem t (x : ℝ) (h : " + "(" * 20_000 + "x < 0" + ")" * 20_000 + ") : x > 0"),
        ("$x \\in \\mathbb{R}$ " * 5_000, "theorem t " + "(x : ℕ) " * 5_000 + ": x = x"),
        ("", "theorem t (x : ℝ) (h : x < " + "9" * 5_000 + ") (h : x > 1) : x = x"),
    ],
)
def test_the_new_checks_stay_bounded_on_hostile_text(informal: str, formal: str) -> None:
    found = [f for f in run_checks(Pair(informal, formal)) if f.code in (*NEW, "check_failed")]
    assert all(f.code in NEW for f in found)  # none raised
    for code in NEW:
        assert sum(f.code == code for f in found) <= 5
