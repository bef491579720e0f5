"""tools/fix_taxonomy.py and the pure parts of tools/mine_fix_history.py: the defect class
of a fix is read from its diff, and a statement's identity ignores its proof and layout."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from fix_taxonomy import classify
from mine_fix_history import normalized, statements


@pytest.mark.parametrize(
    ("before", "after", "defect"),
    [
        (
            "theorem t (n : ℕ) (x : ℝ := 2 * n) : x = 2 := by sorry",
            "theorem t (n : ℕ) (x : ℝ) (hx : x = 2 * n) : x = 2 := by sorry",
            "binder_default",
        ),
        (
            "theorem t (A B : ℝ × ℝ) : dist A B = 1 := by sorry",
            "theorem t (A B : EuclideanSpace ℝ (Fin 2)) : dist A B = 1 := by sorry",
            "euclidean_distance",
        ),
        (
            "theorem t (x y : ℕ) : x + y = 3 := by sorry",
            "theorem t (x y : ℝ) : x + y = 3",
            "number_type",
        ),
        ("theorem t : 2 + 2 = 5 := by sorry", "theorem t : 2 + 2 = 4 := by sorry", "constant"),
        (
            "theorem t (S : Finset ℕ) (h : ∀ n ∈ S, n < 5) : S.card = 5 := by sorry",
            "theorem t (S : Finset ℕ) (h : ∀ n, n ∈ S ↔ n < 5) : S.card = 5 := by sorry",
            "membership_iff",
        ),
        (
            "theorem t (n : ℕ) : ∑ k ∈ Finset.range n, k = 0 := by sorry",
            "theorem t (n : ℕ) : ∑ k ∈ Finset.Icc 1 n, k = 0 := by sorry",
            "range_bounds",
        ),
        (
            "theorem t (f : ℕ → ℕ) (h : f x = x) : f 1 = 1 := by sorry",
            "theorem t (f : ℕ → ℕ) (h : ∀ x, f x = x) : f 1 = 1 := by sorry",
            "quantifier",
        ),
        (
            "theorem t (n : ℕ) : n % 2 = 1 := by sorry",
            "theorem t (n : ℕ) (hn : Odd n) : n % 2 = 1 := by sorry",
            "hypothesis_added",
        ),
        (
            "abbrev t_solution : ℕ := 3\n\ntheorem t : t_solution = 3 := by sorry",
            "abbrev t_solution : ℕ := 4\n\ntheorem t : t_solution = 3 := by sorry",
            "answer",
        ),
    ],
)
def test_a_fix_gets_the_class_its_diff_shows(before: str, after: str, defect: str) -> None:
    assert classify(before, after) == defect


LEAN = """import Mathlib
open Real

abbrev p_solution : ℕ := sorry

/-- Show that it is 3. -/
theorem p (n : ℕ) (h : n = 3) :
    n = p_solution := by
  simp [h]

/-- Another. -/
theorem q (x : ℝ) : x = x := rfl
"""


def test_statements_keep_the_definitions_they_use_and_drop_the_proof() -> None:
    found = statements(LEAN)
    assert sorted(found) == ["p", "q"]
    p = found["p"]
    assert p.formal.startswith("abbrev p_solution : ℕ := sorry")
    assert p.formal.endswith("n = p_solution := by sorry") and "simp" not in p.formal
    assert p.informal == "Show that it is 3." and p.header == "import Mathlib\nopen Real"
    assert "p_solution" not in found["q"].formal


def test_layout_and_big_operator_spelling_are_no_change() -> None:
    old = "theorem t : ∑ k in Finset.range 3, k = 3 := by sorry -- note"
    new = "theorem t :\n  ∑ k ∈ Finset.range 3, k = 3 := by sorry"
    assert normalized(old) == normalized(new)
    assert normalized(old) != normalized(new.replace("= 3", "= 4"))
