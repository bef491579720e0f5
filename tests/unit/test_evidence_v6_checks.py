"""The evidence-6 checks, written from PutnamBench's fix history: each fires on its shapes,
stays silent on the near misses (each near miss is what a looser rule would fire on), and
points its span at the right characters."""

from __future__ import annotations

import pytest

from app.evidence import CHECKS, EVIDENCE_VERSION, run_checks
from app.vocabulary import Pair, Severity
from tests.support.evidence_checks import findings, spanned

NEW = ("unused_variable", "implication_in_iff", "nat_zero_denominator")


def test_the_new_checks_run_last_under_a_new_version() -> None:
    assert tuple(check.code for check in CHECKS[-3:]) == NEW
    assert EVIDENCE_VERSION == "evidence-8"  # evidence-6 added them; 7 bidi, 8 reply_object
    assert all(check.severity is Severity.REVIEW for check in CHECKS[-3:])


# --- unused_variable --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "name"),
    [
        # PutnamBench putnam_2010_a3 before a414636: `b` of `a h_x + b h_y` was dropped.
        (
            "theorem putnam_2010_a3\n    (h : ℝ × ℝ → ℝ)\n    (a b M : ℝ)\n"
            "    (H' : ∀ x, h x = a * (fderiv ℝ h (1, 0) x) + (fderiv ℝ h (0, 1) x))\n"
            "    (H'' : ∀ x, |h x| ≤ M) : h = 0 := by sorry",
            "b",
        ),
        ("theorem t (f g : ℝ → ℝ) (hf : Continuous f) : f 0 = f 0", "g"),
        ("theorem t (n : ℕ) (s : Finset ℕ) (h : 0 < n) : n ≠ 0", "s"),
        ("theorem t (p : Polynomial ℤ) (x : ℝ) : x = x", "p"),
    ],
)
def test_unused_variable_fires_on_a_data_binder_nothing_uses(formal: str, name: str) -> None:
    finding = findings("unused_variable", formal)[0]
    assert finding.severity is Severity.REVIEW
    assert spanned(formal, finding) == name
    assert f"`{name}`" in finding.message


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (a b : ℝ) (h : a < b) : a ≠ b",  # both used (in a hypothesis)
        "theorem t (x : ℝ) (h₀ : 0 < x) (h₁ : x < 2) : x ^ 2 < 4",  # hypotheses go unused
        "theorem t {α : Type*} (x : ℝ) : x = x",  # implicit binders are not reported
        "theorem t [Fintype G] (x : ℝ) : x = x",  # nor instance binders
        "theorem t (G : Type*) [Group G] : True",  # nor types (a binder of `Type*`)
        "theorem t (_n : ℕ) : True",  # an underscore says unused on purpose
        "theorem t (h : ℕ → 0 < 1) : True",  # a proposition, though its type starts with ℕ
        "theorem t (a : Fin n → ℝ) : ∑ i, a i = ∑ i, a i",  # `n` is auto-bound, not a binder
        "theorem t (p : ℝ × ℝ) : p.1 + p.2 = p.2 + p.1",  # used through field access
        "def f (x : ℕ) : ℕ := 3",  # no theorem
    ],
)
def test_unused_variable_is_silent_on_near_misses(formal: str) -> None:
    assert findings("unused_variable", formal) == []


# --- implication_in_iff -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "before"),
    [
        # PutnamBench putnam_2023_b3 before 9f8cf2b: the guard joined the left side.
        (
            "theorem t (y : ℕ → ℝ) (k : ℕ) : "
            "∀ i, i + 2 < k → y (i + 2) < y (i + 1) ↔ y i < y (i + 1)",
            True,
        ),
        # PutnamBench putnam_1977_a2 before 25bc648: the guards joined the right side.
        (
            "theorem t (S : ℝ → ℝ → Prop) : ∀ a b : ℝ, S a b ↔ a ≠ 0 → b ≠ 0 → a + b = 1",
            False,
        ),
        ("theorem t (S : Set ℕ) (h : ∀ a, a ≠ 0 → a ∈ S ↔ a + 1 ∈ S) : True", True),
        ("theorem t (p q r : Prop) : p ∧ q → r ↔ q", True),  # `∧` binds tighter than `→`
    ],
)
def test_implication_in_iff_fires_where_a_guard_joins_one_side(formal: str, before: bool) -> None:
    finding = findings("implication_in_iff", formal)[0]
    assert finding.severity is Severity.REVIEW
    assert spanned(formal, finding) == "↔"
    assert ("(h → A) ↔ B" in finding.message) is before


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (S : Set ℕ) : ∀ a, a ≠ 0 → (a ∈ S ↔ a + 1 ∈ S)",  # bracketed: the guard
        "theorem t (p q r : Prop) : (p → q) ↔ r",  # bracketed: the implication on purpose
        "theorem t (p q r : Prop) : p ↔ (q → r)",
        "theorem t (p : ℕ → Prop) : (∀ n, p n → p (n + 1)) ↔ p 0",  # `→` inside a group
        "theorem t (p : ℕ → Prop) : p 0 ↔ ∀ n, p n → p (n + 1)",  # under a binder's `,`
        "theorem t (P : (ℝ → ℝ) → Prop) : P id ↔ True",  # a type's `→` in another group
        "theorem t : {f : ℕ → ℕ | f 0 = 0 ↔ f 1 = 1} = ∅",  # the `→` is in the type
        "theorem t (p q : Prop) (h : p → q) : p ↔ q",  # in a sibling binder group
        "theorem t (p q : Prop) : p → q",  # no `↔`
        "theorem t (p q : Prop) : (p ↔ q) ∧ (q → p)",  # the `→` after the group closes
    ],
)
def test_implication_in_iff_is_silent_on_near_misses(formal: str) -> None:
    assert findings("implication_in_iff", formal) == []


# --- nat_zero_denominator ---------------------------------------------------------------

MEAN = "Show that $(a_1 \\cdots a_n)^{1/n} \\le \\frac{a_1 + \\cdots + a_n}{n}$."


@pytest.mark.parametrize(
    "formal",
    [
        # PutnamBench putnam_2003_a2 before 9cd2031, which added `0 < n`.
        "theorem t (n : ℕ) (a : Fin n → ℝ) : (∏ i, a i) ^ ((1 : ℝ) / n) ≤ (∑ i, a i) / n",
        "theorem t (n : ℕ) (x : ℝ) (hx : 0 < x) : 0 ≤ x / n + 1",
        "theorem t (m n : ℕ) : 0 < (m : ℝ) / n + 1",
    ],
)
def test_nat_zero_denominator_fires_on_an_unguarded_natural_denominator(formal: str) -> None:
    finding = findings("nat_zero_denominator", formal, MEAN)[0]
    assert finding.severity is Severity.REVIEW
    assert spanned(formal, finding) == "/ n"
    assert "`0 < n`" in finding.message


@pytest.mark.parametrize(
    ("formal", "informal"),
    [
        ("theorem t (n : ℕ) (h : 0 < n) (x : ℝ) : 0 ≤ x / n + 1", MEAN),  # guarded
        ("theorem t (n : ℕ) (h : n ≠ 0) (x : ℝ) : 0 ≤ x / n + 1", MEAN),
        ("theorem t (n : ℕ) (x : ℝ) : x / n = 1", MEAN),  # beside `=`: it may be defined
        ("theorem t (n : ℕ) : ∑ k ∈ Finset.Icc 1 n, (1 : ℝ) / k ≥ 0", MEAN),  # `k` in a set
        ("theorem t (x : ℝ) (n : ℕ) : x / (n + 1) = x / (n + 1)", MEAN),  # not one name
        ("theorem t (x : ℝ) (n : ℕ) : x / n ^ 2 = x / n ^ 2", MEAN),  # a power of it
        ("theorem t (x : ℝ) (f : ℕ → ℕ) (n : ℕ) : x / f n = x / f n", MEAN),  # applied
        ("theorem t (x y : ℝ) : x / y = x / y", MEAN),  # real: `junk_value`'s case
        # written with a cast as well: typed twice, left alone
        ("theorem t (n : ℕ) : (n : ℝ) ^ (1 / n : ℝ) ≤ 2 - 1 / n", MEAN),
        ("theorem t (n : ℕ) (x : ℝ) : 0 ≤ x / n + 1", "Show that it holds."),  # no division
    ],
)
def test_nat_zero_denominator_is_silent_on_near_misses(formal: str, informal: str) -> None:
    assert findings("nat_zero_denominator", formal, informal) == []


# --- hostile text -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("informal", "formal"),
    [
        ("", "theorem t " + "(a : ℝ) " * 10_000 + ": True"),  # one name declared 10,000 times
        ("", "theorem t " + " ".join(f"(x{i} : ℝ)" for i in range(5_000)) + " : True"),
        ("", "theorem t (p : Prop) : " + "p → p ↔ " * 10_000 + "p"),
        ("", "theorem t (p : Prop) : " + "(p ↔ " * 20_000 + "p" + ")" * 20_000),
        ("", "theorem t (p : Prop) : " + "(p → " * 20_000 + "p" + ") ↔ p" * 20_000),
        ("a / b", "theorem t (n : ℕ) (x : ℝ) : " + "x / n + " * 10_000 + "0 ≤ 1"),
        ("a / b", "theorem t " + " ".join(f"(n{i} : ℕ)" for i in range(5_000)) + " : 1 = 1"),
    ],
)
def test_the_new_checks_stay_bounded_on_hostile_text(informal: str, formal: str) -> None:
    found = [f for f in run_checks(Pair(informal, formal)) if f.code in (*NEW, "check_failed")]
    assert all(f.code in NEW for f in found)  # none raised
    for code in NEW:
        assert sum(f.code == code for f in found) <= 5


def test_the_hostile_shapes_do_fire_the_checks_they_are_for() -> None:
    unused = Pair("", "theorem t " + " ".join(f"(x{i} : ℝ)" for i in range(5_000)) + " : True")
    iffs = Pair("", "theorem t (p : Prop) : " + "p → p ↔ " * 10_000 + "p")
    nested = Pair("", "theorem t (p : Prop) : " + "(p → " * 2_000 + "p" + ") ↔ p" * 2_000)
    divisions = Pair("a / b", "theorem t (n : ℕ) (x : ℝ) : " + "x / n + " * 10_000 + "0 ≤ 1")
    assert [f.code for f in run_checks(unused)] == ["unused_variable"] * 5
    assert [f.code for f in run_checks(iffs)] == ["implication_in_iff"] * 5
    assert [f.code for f in run_checks(nested)] == ["implication_in_iff"] * 5
    assert [f.code for f in run_checks(divisions)] == ["nat_zero_denominator"]
