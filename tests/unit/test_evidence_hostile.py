"""Evidence checks on hostile statements: no recursion that grows with the input, no
error on any shape, bounded findings, and a check that raises anyway fails closed.

How fast they are is measured by bench/evidence_bench.py, not asserted here.
"""

from __future__ import annotations

import re
import sys

import pytest

from app.contract.reading import Reading
from app.evidence import CHECK_FAILED, CHECKS, Check, Finding, run_checks
from app.evidence.binding import notation_names
from app.evidence.counted_set import find_counted_set
from app.evidence.nat_division import find_truncating_division
from app.evidence.shadowed_binder import find_shadowed_binder
from app.policy import RoleResult, decide
from app.vocabulary import Outcome, Pair, ParseStatus, Severity, Verdict

BRACKETS = [("(", ")"), ("[", "]"), ("{", "}"), ("⟨", "⟩"), ("⦃", "⦄"), ("s(", ")")]


def nested(depth: int, opener: str = "(", closer: str = ")", inner: str = "1 = 1") -> str:
    return "theorem t : " + opener * depth + inner + closer * depth


@pytest.mark.parametrize("depth", [1_000, 32_000])
def test_deep_parentheses_give_findings_not_errors(depth: int) -> None:
    # 1,000 levels was a RecursionError (a 500); 32,000 (64 KiB) blocked for seconds.
    assert run_checks(Pair("Show that 1 = 1.", nested(depth))) == []


@pytest.mark.parametrize("depth", [1_000, 32_000])
def test_a_counted_set_is_read_through_any_number_of_parentheses(depth: int) -> None:
    formal = nested(depth, inner="S.card = 3")
    theorem = formal.replace("theorem t :", "theorem t (S : Finset ℕ) (h : ∀ x ∈ S, x < 9) :")
    [finding] = run_checks(Pair("", theorem))
    assert finding.code == "counted_set_underdetermined"


def hostile_statements(depth: int) -> list[str]:
    shapes = [nested(depth, opener, closer) for opener, closer in BRACKETS]
    shapes += [
        nested(depth, "(", ""),  # never closed
        "theorem t : " + ")" * depth + "1 = 1",
        "theorem t : " + "∀ x, (" * depth + "x = x",
        "theorem t : " + "∑ k ∈ s, (" * depth + "k + k",
        "theorem t : " + "{x | x ∈ {y | " * depth,
        "theorem t " + "(h : (" * depth + "x",
        "theorem t : " + "/- " * depth + "x",
        "theorem t : 1 = 1 := by" + "\n " * depth + "simp",
        "theorem t : " + "x ^ (" * depth + "1 / 3",
    ]
    return shapes


def test_no_check_recurses_with_the_input_at_depth_100000() -> None:
    # Each check is called directly, so run_checks' fail-closed net cannot hide an error.
    assert sys.getrecursionlimit() <= 1000  # the default: a recursion per level would fail
    for formal in hostile_statements(100_000):
        pair = Pair(formal[:1000], formal, formal[:1000])
        for check in CHECKS:
            assert isinstance(check.detect(pair), list), (check.code, formal[:40])


@pytest.mark.parametrize(
    "formal",
    [
        # Past Python's 4,300-digit int conversion, and past a float (1e400 is inf).
        "theorem t (r : ℝ) : r ^ (" + "7" * 5000 + " / " + "3" * 5000 + ") = 1",
        "theorem t (r : ℝ) : r ^ (1 / " + "3" * 400 + ") = 1",
        "theorem t : (" + "1" * 5000 + " / " + "3" * 5000 + ") ^ 2 = 1 / 4",
        "theorem t : (1 / " + "3" * 400 + ") ^ 2 = 1",
    ],
)
def test_huge_numerals_are_read_not_converted(formal: str) -> None:
    messages = find_truncating_division(Pair("", formal))
    assert messages and all(len(found.message) < 400 for found in messages)


def test_counted_sets_and_shadowed_binders_report_at_most_five() -> None:
    names = [f"S{i}" for i in range(12)]
    counted = (
        "theorem t ("
        + " ".join(names)
        + " : Finset ℕ) : "
        + " + ".join(f"{name}.card" for name in names)
    )
    assert len(find_counted_set(Pair("", counted + " = 12"))) == 5
    variables = [f"a{i}" for i in range(12)]
    uses = " + ".join(variables)
    shadowed = (
        f"theorem t ({' '.join(variables)} : ℕ) (h : {uses} = 0) "
        + " ".join(f"({name})" for name in variables)
        + f" : {uses} = 1"
    )
    assert len(find_shadowed_binder(Pair("", shadowed))) == 5


def failing(pair: Pair) -> list[str]:
    raise RuntimeError(f"broken on {pair.formal}")


def test_a_check_that_raises_gives_check_failed_and_the_others_still_run() -> None:
    first = Check("first", Severity.REVIEW, "always", lambda pair: ["one"])
    broken = Check("broken", Severity.FLAG, "raises", failing)
    last = Check("last", Severity.REVIEW, "always", lambda pair: ["two"])
    secret = "theorem secret_statement_text : 1 = 1"
    findings = run_checks(Pair("", secret), (first, broken, last))
    assert [finding.code for finding in findings] == ["first", CHECK_FAILED, "last"]
    failed = findings[1]
    assert failed.severity is Severity.REVIEW  # whatever the broken check's own severity
    assert "`broken`" in failed.message and "RuntimeError" in failed.message
    assert "secret_statement_text" not in failed.message  # the error's text is not echoed


def test_a_failed_check_never_lets_the_pair_pass() -> None:
    failed = Finding(CHECK_FAILED, "the evidence check `x` failed", Severity.REVIEW)
    faithful = RoleResult(Reading(Verdict.FAITHFUL, ParseStatus.OK, None, None, "test"))
    ruling = decide(faithful, faithful, [failed], 0)
    assert ruling.outcome is Outcome.NEEDS_REVIEW
    assert "evidence_review:check_failed" in ruling.reasons


OLD_NOTATION = re.compile(r'notation[^\n"]*"([^"\n]+)"')


@pytest.mark.parametrize(
    "source",
    [
        'notation "n" => 5',
        'notation:max "‖" x "‖" => f x\nnotation "m" => 3',
        'notation "" "x" => 1',
        'notation "a\n" => 1',
        'notationnotation "b" notation "c"',
        'notation x\n"y" notation',
        '"q" notation "r',
        "notation " * 2_000,  # quadratic for the old regular expression
    ],
)
def test_notation_names_read_as_the_regular_expression_did(source: str) -> None:
    assert notation_names(source) == {m.group(1).strip() for m in OLD_NOTATION.finditer(source)}
