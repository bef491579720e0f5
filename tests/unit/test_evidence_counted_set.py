"""`counted_set_underdetermined`: a set's size or sum is stated, but it is only bounded."""

from __future__ import annotations

import pytest

from app.evidence.counted_set import find_counted_set
from app.vocabulary import Pair


def fires(formal: str) -> bool:
    return bool(find_counted_set(Pair("", formal)))


# Mismatch rows of the labelled dev set (miniF2F-lean4 history, CombiBench before
# 67151a5) and the maintainers' fixes.
SUBSET = (
    "theorem mathd_numbertheory_35 (S : Finset ℕ) (h₀ : ∀ n ∈ S, n ∣ Nat.sqrt 196)"
    " :\n"
    "    (∑ k ∈ S, k) = 24 := by sorry"
)
SUBTYPE = (
    "theorem mathd_numbertheory_35 (S : Finset ℕ) (h₀ : ∀ n : S, n ∣ Nat.sqrt 196)"
    " :\n"
    "    (∑ k in S, k) = 24 := by sorry"
)
UNCONSTRAINED = (
    "theorem mathd_numbertheory_35 (S : Finset ℕ) (h₀ : ∀ n : ℕ, n ∣ Nat.sqrt 196)"
    " :\n"
    "    (∑ k in S, k) = 24 := by sorry"
)
FIXED = (
    "theorem mathd_numbertheory_35 (S : Finset ℕ) (h₀ : ∀ n : ℕ, n ∈ S ↔ n ∣"
    " Nat.sqrt 196) :\n"
    "    (∑ k ∈ S, k) = 24 := by sorry"
)
CARD = (
    "theorem hackmath_3 (sol : Finset ℕ)\n"
    "    (h_sol : ∀ s ∈ sol, 1000 ≤ s ∧ s ≤ 9999 ∧ (Nat.digits 10 s).toFinset = {3, 5, 8, 9}) :\n"
    "    sol.card = hackmath_3_solution := by sorry"
)
CARD_FIXED = CARD.replace("∀ s ∈ sol,", "∀ s, s ∈ sol ↔")


@pytest.mark.parametrize("formal", [SUBSET, SUBTYPE, UNCONSTRAINED, CARD])
def test_dev_set_mismatches_fire(formal: str) -> None:
    assert fires(formal)


@pytest.mark.parametrize("formal", [FIXED, CARD_FIXED])
def test_an_iff_characterisation_does_not_fire(formal: str) -> None:
    assert not fires(formal)


@pytest.mark.parametrize(
    "hypothesis",
    [
        "(h : S = Finset.filter (fun n => n ∣ 14) (Finset.range 15))",
        "(h : Finset.filter (fun n => n ∣ 14) (Finset.range 15) = S)",
        "(h : S.card = 4)",  # a global property: "a set of four numbers such that ..."
        "(h : ¬∃ T : Finset ℕ, T ∉ S)",
        "(h : ∑ x ∈ S, x = 10)",
        "(h : ∀ x, x ∈ S → x < 5)",  # not the bounded-quantifier shape: taken as pinning
    ],
)
def test_any_other_use_of_the_set_counts_as_pinning_it(hypothesis: str) -> None:
    assert not fires(f"theorem t (S : Finset ℕ) {hypothesis} : S.card = 3 := sorry")


@pytest.mark.parametrize(
    "conclusion",
    [
        "S.card ≤ 3",  # a bound on every such set is a fine statement
        "S.card = 3 → True",
        "∃ x ∈ S, x = 1",
        "S.card = 3 ∧ 1 ∈ S",
        "1 ∈ S",  # no measure
    ],
)
def test_only_a_single_equation_measuring_the_set_fires(conclusion: str) -> None:
    assert not fires(f"theorem t (S : Finset ℕ) (h : ∀ x ∈ S, x < 5) : {conclusion} := sorry")


@pytest.mark.parametrize(
    "conclusion",
    ["S.card = 3", "(S.ncard = 3)", "Finset.card S = 3", "∏ x in S, x = 6", "3 = S.encard"],
)
def test_every_measure_shape_is_read(conclusion: str) -> None:
    assert fires(f"theorem t (S : Set ℕ) (h : ∃ x ∈ S, x < 5) : {conclusion} := sorry")


def test_only_set_typed_binders_are_considered() -> None:
    assert not fires("theorem t (S : List ℕ) (h : ∀ x ∈ S, x < 5) : S.sum = 3 := sorry")


def test_the_message_names_the_set() -> None:
    [found] = find_counted_set(Pair("", CARD))
    assert "`sol`" in found.message and "↔" in found.message
    assert found.span is not None  # the conclusion, the equation nothing pins down
    line = CARD.split("\n")[found.span.line - 1]
    assert line[found.span.column : found.span.end_column] == "sol.card = hackmath_3_solution"
