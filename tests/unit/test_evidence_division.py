"""`truncating_division`: a `/` that Lean computes in ℕ/ℤ where it truncates."""

from __future__ import annotations

import pytest

from app.evidence.nat_division import find_truncating_division
from app.vocabulary import Pair


def fires(formal: str) -> bool:
    return bool(find_truncating_division(Pair("", formal)))


# Mismatch rows of the labelled dev set (miniF2F-lean4 before fix 6bcf0b4, and
# DeepSeek-Prover-V1.5's mathd_algebra_314), and the fixed statements.
NTH_ROOT = "theorem algebra_ineq_nto1onlt2m1on\n  (n : ℕ) :\n  n^(1 / n) < 2 - 1 / n := by sorry"
NTH_ROOT_FIXED = (
    "theorem algebra_ineq_nto1onlt2m1on\n  (n : ℕ) :\n"
    "  (n : ℝ) ^ (1 / n : ℝ) ≤ 2 - 1 / n := by sorry"
)
CUBE_ROOT = (
    "theorem x (r : ℝ)\n"
    "  (h₀ : r^(1 / 3) + 1 / r^(1 / 3) = 3) :\n"
    "  r^3 + 1 / r^3 = 5778 := by sorry"
)
CUBE_ROOT_FIXED = (
    "theorem x (r : ℝ)\n  (h₀ : r^(1 / 3: ℝ) + 1 / r^(1 / 3: ℝ) = 3) :\n  r^3 = 5778 := by sorry"
)
QUARTER = (
    "theorem mathd_algebra_314 (n : ℕ) (h₀ : n = 11) :"
    " (1 / 4) ^ (n + 1) * 2 ^ (2 * n) = 1 / 4 := by sorry"
)


@pytest.mark.parametrize("formal", [NTH_ROOT, CUBE_ROOT, QUARTER])
def test_dev_set_mismatches_fire(formal: str) -> None:
    assert fires(formal)


@pytest.mark.parametrize(
    "formal",
    [
        NTH_ROOT_FIXED,
        CUBE_ROOT_FIXED,
        "theorem t (a : ℝ) (h₀ : a = 8) : (16 * (a^2) ^ (1 / 3 : ℝ)) ^ (1 / 3 : ℝ) = 4 := sorry",
        "theorem t (f : ℕ → ℝ) (h₀ : ∀ n, f n = 1 / (n^((1:ℝ)/3))) : f 1 = 1 := sorry",
    ],
)
def test_ascribed_exponents_do_not_fire(formal: str) -> None:
    assert not fires(formal)


def test_exponent_with_an_integer_variable_denominator_fires() -> None:
    assert fires("theorem t (a b : ℕ) (n : NNReal) (h : n ^ (1 / a) = 2) : b = 3 := sorry")


def test_exponent_over_a_real_variable_does_not_fire() -> None:
    # `x` is real, so `1 / x` is real and `^` is rpow.
    assert not fires("theorem t (x : ℝ) : (2 : ℝ) ^ (1 / x) = 1 := sorry")


def test_exponent_over_an_untyped_variable_does_not_fire() -> None:
    assert not fires("theorem t : ∀ x, f x = (g x) ^ (1 / x) := sorry")


def test_a_variable_also_cast_elsewhere_is_not_trusted_as_integer() -> None:
    assert not fires("theorem t (n : ℕ) (h : (n : ℝ) > 0) : (2 : ℝ) ^ (1 / n) = 1 := sorry")


@pytest.mark.parametrize("exponent", ["(p - 1) / 2", "m / 2", "2 * k / 3"])
def test_floor_exponents_of_variable_numerators_do_not_fire(exponent: str) -> None:
    # `a ^ ((p - 1) / 2)` is Euler's criterion: a floor of an even number, meant as such.
    assert not fires(f"theorem t (p m k : ℕ) (a : ZMod p) : a ^ ({exponent}) = 1 := sorry")


def test_an_exact_numeral_exponent_does_not_fire() -> None:
    assert not fires("theorem t (x : ℝ) : x ^ (4 / 2) = x ^ 2 := sorry")
    assert fires("theorem t (x : ℝ) : x ^ (4 / 3) = x := sorry")


def test_numeral_quotient_in_a_pure_integer_comparison_fires() -> None:
    assert fires("theorem t : ∑' n : ℕ, (n / (n ^ 4 + n ^ 2 + 1)) = 1 / 2 := by sorry")
    assert fires("theorem t (n : ℤ) (h : n = 7 / 2) : n = 3 := by sorry")


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (a d : ℝ) (h₀ : a = 42 / 5) : d = 0 := sorry",  # a real side
        "theorem t (x : ℝ) (h : 2 * x = 1 / 2) : x = 1 / 4 := sorry",
        "theorem t : (1 / 4 : ℝ) ^ 2 = 1 / 16 := sorry",  # ascription splits the comparison
        "theorem t : Real.sqrt 2 = 3 / 2 := sorry",  # an unknown function
        "theorem t (n : ℕ) : n / 2 = 3 := sorry",  # a variable numerator: floor meant
        "theorem t (n : ℕ) : 4 / 2 = n := sorry",  # exact
        "theorem t (n : ℕ) : ↑n = 1 / 2 := sorry",  # a cast
    ],
)
def test_numeral_quotients_next_to_anything_non_integer_do_not_fire(formal: str) -> None:
    assert not fires(formal)


def test_a_quotient_outside_any_comparison_does_not_fire() -> None:
    assert not fires("def f (n : ℕ) : ℕ := 1 / 2 + n")


def test_comments_and_strings_are_ignored() -> None:
    assert not fires('theorem t (r : ℝ) : r = 1 := sorry -- r^(1 / 3) = 1\n#eval "x^(1 / 3)"')


def test_findings_are_bounded_and_name_the_exponent() -> None:
    many = "theorem t (r : ℝ) : " + " + ".join(f"r^(1 / {k})" for k in range(3, 40)) + " = 1"
    findings = find_truncating_division(Pair("", many))
    assert len(findings) == 5
    assert "`(1 / 3)`" in findings[0].message
    span = findings[0].span
    assert span is not None and many[span.column : span.end_column] == "(1 / 3)"


def test_a_truncating_literal_points_at_its_quotient() -> None:
    formal = "theorem t (n : ℕ) :\n  (1 / 4) ^ (n + 1) * 2 ^ (2 * n) = 1 / 4 := by sorry"
    (found,) = find_truncating_division(Pair("", formal))  # one message for both `1 / 4`
    assert found.span is not None and found.span.line == 2
    assert formal.split("\n")[1][found.span.column : found.span.end_column] == "1 / 4"
