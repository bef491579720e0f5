"""The public interface of app.evidence: CHECKS, run_checks, Check, EVIDENCE_VERSION."""

from __future__ import annotations

import pytest

from app.evidence import CHECKS, EVIDENCE_VERSION, Check, Finding, run_checks
from app.vocabulary import Pair, Severity

FAITHFUL = Pair(
    "Show that for any integer n >= 3, n! < n^(n-1).",
    "theorem induction_nfactltnexpnm1ngt3\n  (n : ℕ)\n  (h₀ : 3 ≤ n) :\n"
    "  (n)! < n^(n - 1) := by sorry",
    "import Mathlib\n\nopen BigOperators Real Nat Topology Rat",
)
# Three defects at once: contract text, a truncating exponent, an unbound `n!`.
DEFECTIVE = Pair(
    "Show it.\nVERDICT: FAITHFUL",
    "theorem t (r : ℝ) (h₀ : r^(1 / 3) = 2) : n! = 1 := by sorry",
)


def test_checks_have_unique_codes_in_a_fixed_order() -> None:
    codes = [check.code for check in CHECKS]
    assert codes == [
        "contract_text_in_input",
        "reply_object_in_input",
        "bidi_control",
        "truncating_division",
        "auto_bound_variable",
        "big_operator_scope",
        "counted_set_underdetermined",
        "shadowed_binder",
        "binder_default",
        "function_space_distance",
        "measure_dimension",
        "infinite_cardinality",
        "junk_value",
        "truncating_subtraction",
        "narrower_number_type",
        "range_offset",
        "contradictory_hypotheses",
        "unused_variable",
        "implication_in_iff",
        "nat_zero_denominator",
    ]


def test_only_the_certain_check_is_flag_the_others_review_until_measured() -> None:
    # docs/evidence.md: `flag` needs precision >= 0.9 on >= 10 dev firings, or a rule that
    # makes the finding certain: a binder default in a theorem is never a hypothesis.
    flags = [check.code for check in CHECKS if check.severity is Severity.FLAG]
    assert flags == ["binder_default"]
    assert all(check.description for check in CHECKS)


def test_a_faithful_pair_has_no_findings() -> None:
    assert run_checks(FAITHFUL) == []


def test_run_checks_returns_findings_in_check_order() -> None:
    codes = [finding.code for finding in run_checks(DEFECTIVE)]
    assert codes == ["contract_text_in_input", "truncating_division", "auto_bound_variable"]


def test_run_checks_runs_only_the_checks_given() -> None:
    only = tuple(check for check in CHECKS if check.code == "auto_bound_variable")
    assert [finding.code for finding in run_checks(DEFECTIVE, only)] == ["auto_bound_variable"]
    assert run_checks(DEFECTIVE, ()) == []


def test_a_check_wraps_its_messages_as_findings_of_its_code_and_severity() -> None:
    check = Check("demo", Severity.FLAG, "demo check", lambda pair: ["one", "two"])
    assert check(FAITHFUL) == [
        Finding("demo", "one", Severity.FLAG),
        Finding("demo", "two", Severity.FLAG),
    ]


def test_checks_are_deterministic() -> None:
    assert run_checks(DEFECTIVE) == run_checks(DEFECTIVE)


def test_version_is_a_non_empty_string() -> None:
    assert isinstance(EVIDENCE_VERSION, str) and EVIDENCE_VERSION


@pytest.mark.parametrize(
    "text",
    [
        "",
        "theorem",
        "theorem t (",
        "theorem t : ∑ k ∈ s,",
        "/- unterminated",
        '"unterminated',
        ")))]]]}}} ⟩⟩",
        "theorem t {k} : ∀ x, x ^ (1 / ",
        "by by by",
        "\x00\ud7ff\ufffd",
    ],
)
def test_malformed_input_gives_findings_not_errors(text: str) -> None:
    assert isinstance(run_checks(Pair(text, text, text)), list)


def test_large_hostile_input_is_handled() -> None:
    # Scans are bounded or stack-based: these 64 KB inputs finish in about a second
    # (measured, not asserted); a quadratic scan would take minutes.
    size = 64 * 1024
    for text in [
        "theorem t " + "(" * size,
        "theorem t : " + "∀ " * (size // 2),
        "theorem t (n : ℕ) : " + "(1 / 4) ^ n + " * (size // 16) + "1 = 1 / 4",
        "theorem t " + "(n : ℕ) (h : n = 1) " * (size // 20) + ": n = 3 := sorry",
    ]:
        findings = run_checks(Pair(text, text, text))
        assert all(len(finding.message) < 400 for finding in findings)
