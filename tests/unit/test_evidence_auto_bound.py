"""`auto_bound_variable`: a variable-like name used but never bound (Lean auto-binds it)."""

from __future__ import annotations

import pytest

from app.evidence.free_variables import find_auto_bound
from app.vocabulary import Pair

OPEN = "import Mathlib\n\nopen BigOperators Real Nat Topology Rat"


def free(formal: str, header: str = "") -> list[str]:
    return [found.message.split("`")[1] for found in find_auto_bound(Pair("", formal, header))]


# Mismatch rows of the labelled dev set (miniF2F-lean4 before fixes 6bcf0b4 / 6306b5f).
FACTORIAL = (
    "theorem mathd_numbertheory_457\n"
    "  (n : ℕ)\n"
    "  (h₀ : 0 < n)\n"
    "  (h₁ : 80325∣(n!)) :\n"
    "  17 ≤ n := by sorry"
)
FACTORIAL_IN_PRODUCT = (
    "theorem amc12a_2003_p23 (S : Finset ℕ)\n"
    "  (h₀ : ∀ (k : ℕ), k ∈ S ↔ 0 < k ∧ ((k * k) : ℕ) ∣ (∏ i in (Finset.Icc 1 9), i!)) :\n"
    "  S.card = 672 := by sorry"
)
NO_FORALL = (
    "theorem aime_1994_p3\n"
    "  (f : ℤ → ℤ)\n"
    "  (h0 : f x + f (x-1) = x^2)\n"
    "  (h1 : f 19 = 94):\n"
    "  f (94) % 1000 = 561 := by sorry"
)


def test_factorial_without_space_is_a_fresh_identifier() -> None:
    assert free(FACTORIAL) == ["n!"]
    assert free(FACTORIAL_IN_PRODUCT) == ["i!"]
    (found,) = find_auto_bound(Pair("", FACTORIAL))
    assert "factorial is written `n !`" in found.message
    assert found.span is not None
    line = FACTORIAL.split("\n")[found.span.line - 1]
    assert line[found.span.column : found.span.end_column] == "n!"


def test_a_missing_forall_leaves_the_variable_free() -> None:
    assert free(NO_FORALL, OPEN) == ["x"]


@pytest.mark.parametrize(
    "formal",
    [
        FACTORIAL.replace("(n!)", "(n !)"),  # the fixed statements
        FACTORIAL.replace("(n!)", "(n)!"),
        NO_FORALL.replace("(h0 : f x", "(h0 : ∀ x, f x"),
        NO_FORALL.replace("(f : ℤ → ℤ)", "(x : ℤ) (f : ℤ → ℤ)"),
    ],
)
def test_fixed_statements_are_silent(formal: str) -> None:
    assert free(formal, OPEN) == []


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (a b : ℕ) : a = b := sorry",
        "theorem t {α : Type*} [Ring α] (x : α) : x = x := sorry",
        "theorem t (n) (h : n = 3) : n = 3 := sorry",  # a bare binder
        "theorem t : ∀ x y : ℝ, x + y = y + x := sorry",
        "theorem t (S : Set ℕ) : ∀ x ∈ S, ∃ y > x, y = y := sorry",
        "theorem t : ∃! k, k = 1 := sorry",
        "theorem t : (fun x => x) = fun (a, b) => a := sorry",
        "theorem t : ∑ k in Finset.range 3, k = 3 := sorry",
        "theorem t (s : Finset ℕ) (f : ℕ → ℕ) : ∑ k ∈ s, f k = 3 := sorry",
        "theorem t : {x | x > 0} = {y : ℕ | y ≥ 1} := sorry",
        "theorem t (f : ℕ → ℕ) (S T : Set ℕ) : {f x | x ∈ S} = T := sorry",  # image
        "theorem t (A : Set ℕ) : Nonempty {x // x ∈ A} := sorry",  # subtype
        "theorem t : let x := 1; x = 1 := sorry",
        "theorem t (p : ℕ × ℕ) : let (a, b) := p; a = b := sorry",
        "theorem t : ⨍ t in Set.Icc 0 1, t = 0 := sorry",
        "def f (x : ℕ) := x\ntheorem t : f 1 = 1 := sorry",  # a declaration's name
        "inductive L\n  | I | M | O\ntheorem t : L.I = I := sorry",  # constructors
        "structure S where\n  c : ℕ\n  r n1 n2 := n1 = n2\ntheorem t : True := sorry",
        "instance : Foo where coe f := f.1\ntheorem t : True := sorry",
        "theorem t (p : Prop) [Decidable p] : (if h : p then h else 0) = 0 := sorry",
        "theorem t (p : ℕ × ℕ) : (match p with | ⟨a, b⟩ => a) = 0 := sorry",
        "theorem t : Sort u = Type v := sorry",
        "theorem t : Function.Injective (s(1, 2)) := sorry",
        "theorem t : Fin 2 ↪o Fin 3 := sorry",
        "theorem t : π > 3 ∧ I * I = -1 ∧ X ≠ C 1 := sorry",  # opened notations
    ],
)
def test_every_binding_form_is_recognised(formal: str) -> None:
    assert free(formal) == []


def test_a_binder_in_the_header_counts() -> None:
    assert free("theorem t : m = m := sorry", "variable (m : ℕ)") == []
    assert free("theorem t : m = m := sorry") == ["m"]


def test_a_notation_declared_name_counts() -> None:
    formal = 'local notation3 "n" => (m + 2)\ntheorem t (m : ℕ) : n = n := sorry'
    assert free(formal) == []


def test_a_bound_n_does_not_bind_n_bang() -> None:
    assert free("theorem t (n : ℕ) : n! = n := sorry") == ["n!"]


def test_only_variable_like_names_are_candidates() -> None:
    # `sqrt`, `card` may be library constants we cannot see; `x₁`, `a'`, `y2` look bound.
    assert free("theorem t : sqrt card = foo := sorry") == []
    assert free("theorem t : x₁ + a' + y2 = 0 := sorry") == ["x₁", "a'", "y2"]


def test_names_in_tactic_blocks_comments_and_strings_are_ignored() -> None:
    formal = 'theorem t : True := by\n  intro x\n  exact x -- y\n#check "z"'
    assert free(formal) == []


def test_the_head_of_a_dotted_name_is_checked() -> None:
    assert free("theorem t : s.card = 3 := sorry") == ["s"]
    assert free("theorem t (s : Finset ℕ) : s.card = 3 := sorry") == []


def test_findings_are_unique_and_bounded() -> None:
    formal = "theorem t : " + " + ".join(f"x{i} + x{i}" for i in range(20)) + " = 0"
    assert free(formal) == ["x0", "x1", "x2", "x3", "x4"]
