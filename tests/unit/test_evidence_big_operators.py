"""`big_operator_scope`: a ∑/∏ binder used after a top-level `+`/`-` ended the body."""

from __future__ import annotations

import pytest

from app.evidence.big_operators import find_big_operator_scope
from app.vocabulary import Pair


def fires(formal: str) -> bool:
    return bool(find_big_operator_scope(Pair("", formal)))


# Mismatch rows of the labelled dev set (DeepSeek-Prover-V1.5 datasets/minif2f.jsonl,
# issue #26) and their parenthesised counterparts from miniF2F-lean4.
PRODUCT = (
    "theorem x (n : ℕ) (h₀ : 0 < n) :\n"
    "    (∏ k in Finset.Icc 1 n, 1 + (1 : ℝ) / 2 ^ k) < 5 / 2 := by sorry"
)
PRODUCT_FIXED = (
    "theorem x (n : ℕ) (h₀ : 0 < n) :\n"
    "  ∏ k ∈ Finset.Icc 1 n, (1 + (1:ℝ) / 2^k) < 5 / 2 := by sorry"
)
TOWER = (
    "theorem amc12a_2021_p9 : (∏ k in Finset.range 7, 2 ^ 2 ^ k + 3 ^ 2 ^ k) = 3 ^"
    " 128 - 2 ^ 128 := by sorry"
)
SERIES = (
    "theorem x (a d : ℝ) (h₀ : (∑ k in Finset.range 5, a + k * d) = 70) : a = 42 / 5 := by sorry"
)
SERIES_FIXED = (
    "theorem x (a d: ℝ)\n"
    "  (h₀ : ∑ k ∈ (Finset.range 5), (a + k * d) = 70) :\n"
    "  a = 42/5 := by sorry"
)


@pytest.mark.parametrize("formal", [PRODUCT, TOWER, SERIES])
def test_dev_set_mismatches_fire(formal: str) -> None:
    assert fires(formal)


@pytest.mark.parametrize("formal", [PRODUCT_FIXED, SERIES_FIXED])
def test_parenthesised_bodies_do_not_fire(formal: str) -> None:
    assert not fires(formal)


def test_minus_ends_the_body_too() -> None:
    assert fires("theorem t (s : Finset ℕ) : (∑ i ∈ s, i - i) = 0 := sorry")


@pytest.mark.parametrize(
    "body",
    [
        "2 * k + 1",  # the later `+ 1` does not mention k: the scope is right
        "k * k",  # `*` binds tighter than the body's precedence
        "-k + 1",  # a leading `-` is unary
        "(k + 1) * 2",
        "f (k + 1)",
    ],
)
def test_bodies_whose_binder_does_not_escape_do_not_fire(body: str) -> None:
    assert not fires(f"theorem t (f : ℕ → ℕ) : ∑ k in Finset.range 8, {body} = 9 := sorry")


def test_a_comparison_ends_the_expression() -> None:
    # `∑ k ∈ s, f k + 1 = k` : the `k` after `=` is outside the expression we watch.
    assert not fires("theorem t (k : ℕ) (s : Finset ℕ) : ∑ i ∈ s, i + 1 = i := sorry")


def test_a_closing_bracket_ends_the_expression() -> None:
    assert not fires("theorem t (s : Finset ℕ) : ((∑ k ∈ s, k) + 1, k) = (0, 0) := sorry")


@pytest.mark.parametrize("binder", ["k in s", "k ∈ s", "(k : ℕ)", "k : ℕ", "k < 5", "k"])
def test_every_binder_shape_is_read(binder: str) -> None:
    assert fires(f"theorem t (s : Finset ℕ) : ∏ {binder}, 1 + k = 2 := sorry")


def test_the_message_names_the_operator_and_the_variable() -> None:
    [found] = find_big_operator_scope(Pair("", SERIES))
    assert "`∑ k ...`" in found.message and "`+`" in found.message
    # The span is the escaped use: the `k` of `k * d`, after the body ended at `+`.
    assert found.span is not None and found.span.line == 1
    assert SERIES[found.span.column : found.span.column + 5] == "k * d"


def test_a_body_starting_with_if_or_fun_takes_the_plus_inside() -> None:
    # From PutnamBench 2023 B6: the `+` is inside the `if` condition, not after the body.
    formal = "theorem t (n : ℕ) : ∑' b : ℕ, if b * 2 + b = n then 1 else 0 = 0 := sorry"
    assert not fires(formal)
    assert not fires("theorem t : ∑ k ∈ s, fun x => x + k = 0 := sorry")


def test_a_nested_operator_that_rebinds_the_name_is_not_an_escape() -> None:
    # From miniF2F-lean4 mathd_algebra_158 (faithful): the second ∑ binds its own k.
    formal = (
        "theorem t (a : ℕ) (h₁ : ∑ k ∈ Finset.range 8, (2 * k + 1)"
        " - ∑ k ∈ Finset.range 5, (a + 2 * k) = (4:ℤ)) : a = 8 := by sorry"
    )
    assert not fires(formal)


def test_an_escape_after_a_nested_bracketed_operator_still_fires() -> None:
    assert fires("theorem t (s : Finset ℕ) : ∏ k ∈ s, 1 + (∑ j ∈ s, j) * k = 2 := sorry")
