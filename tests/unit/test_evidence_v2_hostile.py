"""The evidence-3 checks on 64 KiB statements of their own shapes: no error, at most five
findings each, and every span inside the text. (Their cost is measured by
bench/evidence_bench.py, not asserted here.)"""

from __future__ import annotations

import pytest

from app.evidence import CHECK_FAILED, run_checks
from app.vocabulary import Pair

SIZE = 64 * 1024
INFORMAL = "Show that a - b is at most 3: the square root, the log, the area, x/y."


def repeated(head: str, unit: str, tail: str = "") -> str:
    return head + unit * ((SIZE - len(head) - len(tail)) // len(unit)) + tail


SHAPES = [
    repeated("theorem t ", "(a : ℕ := 1) ", ": a = 1"),
    repeated("theorem t (A B : ℝ × ℝ) : ", "dist A B + ", "0 = 1"),
    repeated("theorem t ", "(x : Fin 3 → ℝ) (x : ℝ × ℝ) (x : Fin 2 → ℝ) ", ": dist x x = 0"),
    repeated("theorem t (S : Set (ℝ × ℝ)) : ", "∀ A ∈ S, dist A A = 1 ∧ ", "True"),
    repeated("", "def p (n : ℕ) : ℝ × ℝ := (n, n)\n", "theorem t : dist x.p y.p = 1"),
    repeated("theorem t (S : Set (Fin 3 → ℝ)) : ", "volume S + ", "0 = 1"),
    repeated("theorem t (S : Set ℕ) : ", "S.ncard ≤ ", "3"),
    repeated("theorem t (x y : ℝ) : ", "Real.sqrt x + x / y + x⁻¹ + ", "0 = 1"),
    repeated("theorem t (a b : ℕ) : ", "a - b - ", "a = 0"),
    repeated("theorem t (f : ℕ → ℕ) : ", "f (a) - f b ≤ ", "0"),
    repeated("theorem t (a b : ℕ) (h : a - b = 0) : ", "(", "a - b"),
]
NEW = {
    "binder_default",
    "function_space_distance",
    "measure_dimension",
    "infinite_cardinality",
    "junk_value",
    "truncating_subtraction",
}


@pytest.mark.parametrize("formal", SHAPES, ids=range(len(SHAPES)))
def test_the_new_checks_stay_bounded_and_in_the_text(formal: str) -> None:
    findings = run_checks(Pair(INFORMAL, formal))
    assert all(finding.code != CHECK_FAILED for finding in findings)
    for code in NEW:
        assert sum(finding.code == code for finding in findings) <= 5
    lines = formal.split("\n")
    for finding in findings:
        assert finding.line is not None and finding.column is not None
        assert finding.end_column is not None
        assert 0 <= finding.column < finding.end_column <= len(lines[finding.line - 1])


def test_the_shapes_do_fire_the_checks_they_are_for() -> None:
    fired = {f.code for formal in SHAPES for f in run_checks(Pair(INFORMAL, formal))}
    assert fired >= NEW  # the informal text names an area, a root, a log, a difference
