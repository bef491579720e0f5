"""`shadowed_binder`: a theorem binder declared again while both copies are in use."""

from __future__ import annotations

from app.evidence.shadowed_binder import find_shadowed_binder
from app.vocabulary import Pair


def shadowed(formal: str) -> list[str]:
    return [found.message.split("`")[1] for found in find_shadowed_binder(Pair("", formal))]


# Mismatch row of the labelled dev set (miniF2F-lean4 at 816817e) and its fix.
EXTRA_BINDER = (
    "theorem mathd_algebra_247 (t s : ℝ) (n : ℤ) (h₀ : t = 2 * s - s ^ 2)"
    " (h₁ : s = n ^ 2 - 2 ^ n + 1)\n  (n) (_ : n = 3) : t = 0 := by sorry"
)
FIXED = EXTRA_BINDER.replace("(n) (_ : n = 3)", "(_ : n = 3)")


def test_dev_set_mismatch_fires() -> None:
    assert shadowed(EXTRA_BINDER) == ["n"]


def test_the_span_is_the_second_declaration() -> None:
    [found] = find_shadowed_binder(Pair("", EXTRA_BINDER))
    assert found.span is not None and (found.span.line, found.span.column) == (2, 3)
    assert EXTRA_BINDER.split("\n")[1][2:5] == "(n)"
    typed = "theorem t (n : ℕ) (h : n = 1) (n : ℕ) (h' : n = 2) : n = 2 := by sorry"
    [found] = find_shadowed_binder(Pair("", typed))
    assert found.span is not None and typed[found.span.column : found.span.end_column] == "n"
    assert found.span.column == typed.index("(n : ℕ) (h'") + 1


def test_the_fixed_statement_is_silent() -> None:
    assert shadowed(FIXED) == []


def test_a_repeated_hypothesis_name_is_harmless() -> None:
    assert shadowed("theorem t (x : ℕ) (h₀ : x > 0) (h₀ : x < 5) : x = 1 := sorry") == []


def test_no_use_between_the_declarations_is_harmless() -> None:
    assert shadowed("theorem t {X : Type*} (X : Type*) [Foo X] (h : X = X) : True := sorry") == []


def test_no_use_after_the_second_declaration_is_harmless() -> None:
    assert shadowed("theorem t (n : ℕ) (h : n = 1) (n : ℕ) : True := sorry") == []


def test_a_use_in_the_conclusion_counts_as_after() -> None:
    assert shadowed("theorem t (n : ℕ) (h : n = 1) (n : ℕ) : n = 1 := sorry") == ["n"]
