"""Evidence: deterministic findings about a pair itself, before any LLM sees it.

Pure and cheap: plain strings in, findings out; no Lean, no network, no database. Every
check and its measured precision on the labelled data is described in docs/evidence.md.
`EVIDENCE_VERSION` changes whenever any check could answer differently for some pair,
so stored findings can be told apart from those of another version.

Every check runs in time linear in the pair and recurses nowhere; should one raise
anyway, `run_checks` records the finding `check_failed` (severity review) in its place, so
the pair can never pass on evidence that was not gathered (fail closed), and the other
checks still run.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.evidence.bidi_controls import find_bidi_controls
from app.evidence.big_operators import find_big_operator_scope
from app.evidence.binder_default import find_binder_default
from app.evidence.check import Check, Detector
from app.evidence.contract_text import find_contract_text
from app.evidence.contradictory_bounds import find_contradictory_hypotheses
from app.evidence.counted_set import find_counted_set
from app.evidence.finding import Detected, Finding, Span
from app.evidence.free_variables import find_auto_bound
from app.evidence.function_space_distance import find_function_space_distance
from app.evidence.iff_precedence import find_implication_in_iff
from app.evidence.infinite_cardinality import find_infinite_cardinality
from app.evidence.junk_value import find_junk_value
from app.evidence.measure_dimension import find_measure_dimension
from app.evidence.nat_division import find_truncating_division
from app.evidence.number_type import find_narrower_number_type
from app.evidence.range_offset import find_range_offset
from app.evidence.reply_object import find_reply_object
from app.evidence.shadowed_binder import find_shadowed_binder
from app.evidence.truncating_subtraction import find_truncating_subtraction
from app.evidence.unused_binder import find_unused_variable
from app.evidence.zero_denominator import find_nat_zero_denominator
from app.vocabulary import Pair, Severity

EVIDENCE_VERSION = "evidence-8"
CHECK_FAILED = "check_failed"

CONTRACT_TEXT_IN_INPUT = Check(
    "contract_text_in_input",
    Severity.REVIEW,
    "a statement line begins with VERDICT:, BACK-TRANSLATION: or ISSUES:",
    find_contract_text,
)
# The same for the reply object of the tool and json formats (app/evidence/reply_object.py).
REPLY_OBJECT_IN_INPUT = Check(
    "reply_object_in_input",
    Severity.REVIEW,
    'a statement holds a JSON key "verdict", as a tool or JSON reply\'s object does',
    find_reply_object,
)
# A pair whose shown text is not its stored text cannot be read by a person as it is, so
# it never passes; `review`, not `flag`: a mark in Hebrew or Arabic text may be honest.
BIDI_CONTROL = Check(
    "bidi_control",
    Severity.REVIEW,
    "a bidirectional control (U+202A-U+202E, U+2066-U+2069, LRM, RLM, ALM) in the pair",
    find_bidi_controls,
)
TRUNCATING_DIVISION = Check(
    "truncating_division",
    Severity.REVIEW,
    "a `/` computed in ℕ/ℤ where it truncates: `r^(1 / 3)`, `(1 / 4) ^ n = 1 / 4`",
    find_truncating_division,
)
AUTO_BOUND_VARIABLE = Check(
    "auto_bound_variable",
    Severity.REVIEW,
    "a variable-like name (`x`, `n!`) used but never bound, so Lean auto-binds it",
    find_auto_bound,
)
BIG_OPERATOR_SCOPE = Check(
    "big_operator_scope",
    Severity.REVIEW,
    "a ∑/∏ binder used after a top-level `+`/`-` has ended the operator's body",
    find_big_operator_scope,
)
COUNTED_SET_UNDERDETERMINED = Check(
    "counted_set_underdetermined",
    Severity.REVIEW,
    "the size or sum of a set is stated, but hypotheses only bound it as `∀ x ∈ S, P x`",
    find_counted_set,
)
SHADOWED_BINDER = Check(
    "shadowed_binder",
    Severity.REVIEW,
    "a theorem binder declared again while the earlier one is already in use",
    find_shadowed_binder,
)

# Certain by Lean's rule, so `flag` (docs/evidence.md, Severities): a default in a
# theorem's binder is never a hypothesis.
BINDER_DEFAULT = Check(
    "binder_default",
    Severity.FLAG,
    "a theorem binder with a default value `(x : T := v)`, which is no hypothesis `x = v`",
    find_binder_default,
)
FUNCTION_SPACE_DISTANCE = Check(
    "function_space_distance",
    Severity.REVIEW,
    "`dist`, a ball or `‖p - q‖` on `ℝ × ℝ` or `Fin n → ℝ`, whose metric is the sup metric",
    find_function_space_distance,
)
MEASURE_DIMENSION = Check(
    "measure_dimension",
    Severity.REVIEW,
    "`volume` in a space of more dimensions than the length or area the text asks for",
    find_measure_dimension,
)
INFINITE_CARDINALITY = Check(
    "infinite_cardinality",
    Severity.REVIEW,
    "`ncard`/`Nat.card` bounded above (or `= 0`, even) of a set not shown finite",
    find_infinite_cardinality,
)
JUNK_VALUE = Check(
    "junk_value",
    Severity.REVIEW,
    "`√x`, `log x`, `a / x`, `x⁻¹` of a variable nothing keeps in the domain, or `Nat.sqrt`",
    find_junk_value,
)
TRUNCATING_SUBTRACTION = Check(
    "truncating_subtraction",
    Severity.REVIEW,
    "`a - b` of ℕ variables no hypothesis orders, where the difference can be negative",
    find_truncating_subtraction,
)
NARROWER_NUMBER_TYPE = Check(
    "narrower_number_type",
    Severity.REVIEW,
    "a variable typed `ℕ`/`ℤ` where the informal text says it is an integer or a real",
    find_narrower_number_type,
)
RANGE_OFFSET = Check(
    "range_offset",
    Severity.REVIEW,
    "`∑ k ∈ Finset.range n` where the informal sum runs to `n`: the last term is missing",
    find_range_offset,
)
CONTRADICTORY_HYPOTHESES = Check(
    "contradictory_hypotheses",
    Severity.REVIEW,
    "hypotheses bound a variable by numbers no value satisfies, so the theorem is vacuous",
    find_contradictory_hypotheses,
)
UNUSED_VARIABLE = Check(
    "unused_variable",
    Severity.REVIEW,
    "a theorem binder of data (`(b : ℝ)`) that nothing in the statement uses",
    find_unused_variable,
)
IMPLICATION_IN_IFF = Check(
    "implication_in_iff",
    Severity.REVIEW,
    "`h → A ↔ B` or `A ↔ h → B` unbracketed: `↔` binds looser, so `h` joins one side",
    find_implication_in_iff,
)
NAT_ZERO_DENOMINATOR = Check(
    "nat_zero_denominator",
    Severity.REVIEW,
    "a division `/ n` by an `n : ℕ` nothing keeps away from 0, where `x / 0 = 0`",
    find_nat_zero_denominator,
)

CHECKS: tuple[Check, ...] = (
    CONTRACT_TEXT_IN_INPUT,
    REPLY_OBJECT_IN_INPUT,
    BIDI_CONTROL,
    TRUNCATING_DIVISION,
    AUTO_BOUND_VARIABLE,
    BIG_OPERATOR_SCOPE,
    COUNTED_SET_UNDERDETERMINED,
    SHADOWED_BINDER,
    BINDER_DEFAULT,
    FUNCTION_SPACE_DISTANCE,
    MEASURE_DIMENSION,
    INFINITE_CARDINALITY,
    JUNK_VALUE,
    TRUNCATING_SUBTRACTION,
    NARROWER_NUMBER_TYPE,
    RANGE_OFFSET,
    CONTRADICTORY_HYPOTHESES,
    UNUSED_VARIABLE,
    IMPLICATION_IN_IFF,
    NAT_ZERO_DENOMINATOR,
)


def run_checks(pair: Pair, checks: Iterable[Check] = CHECKS) -> list[Finding]:
    """Every finding of every check, in check order; a check that raises gives one
    `check_failed` finding (severity review) instead of its own."""
    return [finding for check in checks for finding in _run(check, pair)]


def _run(check: Check, pair: Pair) -> list[Finding]:
    try:
        return check(pair)
    except Exception as error:  # fail closed: a broken check must not pass or 500 a pair
        # No logging here (the core stays pure): the finding, stored with the screening,
        # names the check and the error's type, and the stored pair reproduces it offline.
        return [Finding(CHECK_FAILED, _failure_message(check, error), Severity.REVIEW)]


def _failure_message(check: Check, error: Exception) -> str:
    return (
        f"the evidence check `{check.code}` failed ({type(error).__name__}) on this pair, "
        "so its evidence is missing; a person must look"
    )


__all__ = [
    "CHECKS",
    "CHECK_FAILED",
    "EVIDENCE_VERSION",
    "Check",
    "Detected",
    "Detector",
    "Finding",
    "Span",
    "run_checks",
]
