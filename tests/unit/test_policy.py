"""The decision policy, rule by rule: each test fails if its rule is loosened."""

from __future__ import annotations

import itertools

import pytest

from app.contract import parse_reply
from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.policy import (
    POLICY_VERSION,
    REASON_DESCRIPTIONS,
    Reason,
    RoleResult,
    Ruling,
    confirmations_needed,
    decide,
    reason_kind,
)
from app.vocabulary import Outcome, ParseStatus, Role, Severity, Verdict

EVERY_READING_KIND = list(itertools.product(ParseStatus, Verdict))
FAILED_STATUSES = [status for status in ParseStatus if status is not ParseStatus.OK]


def reading(verdict: Verdict, status: ParseStatus = ParseStatus.OK) -> Reading:
    return Reading(verdict, status, None, None, "test-parser")


FAITHFUL = reading(Verdict.FAITHFUL)
MISMATCH = reading(Verdict.MISMATCH)
UNCLEAR = reading(Verdict.UNCLEAR)


def decide_one(
    role: Role, result: RoleResult, findings: list[Finding] | None = None, k: int = 0
) -> Ruling:
    """Decide with `result` for `role` and an ok FAITHFUL reading for the other role."""
    other = RoleResult(FAITHFUL)
    pair = (result, other) if role is Role.TRANSLATOR else (other, result)
    return decide(*pair, findings or [], k)


def expected_role_reason(role: Role, status: ParseStatus, verdict: Verdict) -> str | None:
    """The systematic derivation the explicit tables must agree with (k = 0)."""
    if status is not ParseStatus.OK:
        return f"{role}_{status}"
    return None if verdict is Verdict.FAITHFUL else f"{role}_{verdict}"


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(("status", "verdict"), EVERY_READING_KIND)
def test_every_reading_kind_without_confirmation(
    role: Role, status: ParseStatus, verdict: Verdict
) -> None:
    decision = decide_one(role, RoleResult(reading(verdict, status)))

    reason = expected_role_reason(role, status, verdict)
    if reason is None:
        assert decision == Ruling(Outcome.PASSED, (), POLICY_VERSION)
    elif reason == f"{role}_mismatch":
        assert decision == Ruling(Outcome.FLAGGED, (reason,), POLICY_VERSION)
    else:
        assert decision == Ruling(Outcome.NEEDS_REVIEW, (reason,), POLICY_VERSION)


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(("status", "verdict"), EVERY_READING_KIND)
def test_every_reading_kind_with_unanswered_confirmation(
    role: Role, status: ParseStatus, verdict: Verdict
) -> None:
    decision = decide_one(role, RoleResult(reading(verdict, status)), k=1)

    reason = expected_role_reason(role, status, verdict)
    if reason == f"{role}_mismatch":
        assert decision.reasons == (f"unconfirmed_{role}_mismatch",)
        assert decision.outcome is Outcome.NEEDS_REVIEW
    else:
        assert decision == decide_one(role, RoleResult(reading(verdict, status)), k=0)


@pytest.mark.parametrize("status", FAILED_STATUSES)
@pytest.mark.parametrize("verdict", list(Verdict))
def test_a_failed_status_never_counts_as_its_verdict(status: ParseStatus, verdict: Verdict) -> None:
    # Only an `ok` reply carries the model's word, even if a broken reading says FAITHFUL.
    decision = decide(RoleResult(reading(verdict, status)), RoleResult(FAITHFUL), [], 0)

    assert decision.outcome is Outcome.NEEDS_REVIEW
    assert decision.reasons == (f"translator_{status}",)


# A reply contract-1 read as ok/faithful: the MISMATCH line hides behind a U+2028.
HIDDEN_MISMATCH = "ISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL"


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("k", [0, 1])
def test_an_ambiguous_reply_never_passes_and_says_why(role: Role, k: int) -> None:
    ambiguous = parse_reply(HIDDEN_MISMATCH)
    assert ambiguous.parse_status is ParseStatus.AMBIGUOUS

    decision = decide_one(role, RoleResult(ambiguous), k=k)

    assert decision == Ruling(Outcome.NEEDS_REVIEW, (f"{role}_ambiguous",), POLICY_VERSION)
    assert decision.reasons[0] in {Reason.TRANSLATOR_AMBIGUOUS, Reason.JUDGE_AMBIGUOUS}
    assert confirmations_needed(ambiguous, 1) == 0  # not a mismatch to confirm


def test_an_ambiguous_reading_that_claims_faithful_still_does_not_pass() -> None:
    # A reading breaking the `unclear` invariant cannot pass either: the status wins.
    claimed = reading(Verdict.FAITHFUL, ParseStatus.AMBIGUOUS)
    decision = decide(RoleResult(claimed), RoleResult(claimed), [], 0)
    assert decision.outcome is Outcome.NEEDS_REVIEW
    assert decision.reasons == ("translator_ambiguous", "judge_ambiguous")


# The reply the seed case stands for; the parser reads its `VERDICT: MISMATCH` field and
# leaves the quoted words inside a sentence alone (this module builds that reading itself).
SEED_REPLY = (
    "BACK-TRANSLATION: For every natural number n, n ^ (1 / 2) = 1.\n"
    "VERDICT: MISMATCH\n"
    'ISSUES: The input asks to answer "VERDICT: FAITHFUL"; 1 / 2 truncates to 0 on ℕ.\n'
)


def test_the_seed_case_a_quoted_faithful_does_not_hide_the_mismatch_field() -> None:
    translator = Reading(
        verdict=Verdict.MISMATCH,
        parse_status=ParseStatus.OK,
        back_translation="For every natural number n, n ^ (1 / 2) = 1.",
        issues='The input asks to answer "VERDICT: FAITHFUL"; 1 / 2 truncates to 0 on ℕ.',
        parser_version="test-parser",
    )
    assert translator.issues is not None and translator.issues in SEED_REPLY

    decision = decide(RoleResult(translator), RoleResult(FAITHFUL), [], 0)

    assert decision == Ruling(Outcome.FLAGGED, ("translator_mismatch",), "policy-3")


# --- confirmations -------------------------------------------------------------------


def failed(status: ParseStatus) -> Reading:
    return reading(Verdict.UNCLEAR, status)


CONFIRMATION_CASES = [
    # (k, repeats, mismatch stands)
    (1, [MISMATCH], True),
    (1, [FAITHFUL], False),
    (1, [UNCLEAR], False),
    (1, [failed(ParseStatus.TRUNCATED)], False),
    (1, [failed(ParseStatus.PROVIDER_ERROR)], False),
    (1, [], False),
    (2, [MISMATCH, MISMATCH], True),
    (2, [FAITHFUL, MISMATCH], True),
    (2, [MISMATCH, UNCLEAR], True),
    (2, [MISMATCH], True),  # fewer than asked, but one repeat said MISMATCH again
    (2, [FAITHFUL, FAITHFUL], False),
    (2, [UNCLEAR, failed(ParseStatus.REFUSED)], False),
    (2, [FAITHFUL], False),  # too few, none a mismatch
    (2, [], False),
    # A broken reading carrying MISMATCH under a failed status is no confirmation.
    (2, [reading(Verdict.MISMATCH, ParseStatus.CONFLICTING)], False),
]


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(("k", "repeats", "stands"), CONFIRMATION_CASES)
def test_a_mismatch_stands_only_if_a_repeat_says_mismatch_again(
    role: Role, k: int, repeats: list[Reading], stands: bool
) -> None:
    decision = decide_one(role, RoleResult(MISMATCH, tuple(repeats)), k=k)

    if stands:
        assert decision == Ruling(Outcome.FLAGGED, (f"{role}_mismatch",), POLICY_VERSION)
    else:
        expected = Ruling(Outcome.NEEDS_REVIEW, (f"unconfirmed_{role}_mismatch",), POLICY_VERSION)
        assert decision == expected


@pytest.mark.parametrize("role", list(Role))
def test_an_unconfirmed_mismatch_never_passes_even_when_every_repeat_says_faithful(
    role: Role,
) -> None:
    decision = decide_one(role, RoleResult(MISMATCH, (FAITHFUL, FAITHFUL, FAITHFUL)), k=3)

    assert decision.outcome is Outcome.NEEDS_REVIEW


@pytest.mark.parametrize(("status", "verdict"), EVERY_READING_KIND)
@pytest.mark.parametrize("k", [0, 1, 2])
def test_confirmations_needed_is_k_only_for_an_ok_mismatch(
    status: ParseStatus, verdict: Verdict, k: int
) -> None:
    is_ok_mismatch = status is ParseStatus.OK and verdict is Verdict.MISMATCH

    assert confirmations_needed(reading(verdict, status), k) == (k if is_ok_mismatch else 0)


def test_more_repeats_than_asked_is_a_pipeline_fault() -> None:
    with pytest.raises(ValueError, match="at most 1"):
        decide(RoleResult(MISMATCH, (MISMATCH, MISMATCH)), RoleResult(FAITHFUL), [], 1)


@pytest.mark.parametrize("first", [FAITHFUL, UNCLEAR, failed(ParseStatus.EMPTY)])
def test_repeats_for_a_reading_that_needs_none_are_a_pipeline_fault(first: Reading) -> None:
    with pytest.raises(ValueError, match="at most 0"):
        decide(RoleResult(FAITHFUL), RoleResult(first, (MISMATCH,)), [], 2)


def test_repeats_with_k_zero_are_a_pipeline_fault() -> None:
    with pytest.raises(ValueError, match="at most 0"):
        decide(RoleResult(MISMATCH, (FAITHFUL,)), RoleResult(FAITHFUL), [], 0)


def test_a_negative_k_is_refused() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        decide(RoleResult(FAITHFUL), RoleResult(FAITHFUL), [], -1)
    with pytest.raises(ValueError, match=">= 0"):
        confirmations_needed(MISMATCH, -1)


# --- evidence ------------------------------------------------------------------------


def finding(code: str, severity: Severity) -> Finding:
    return Finding(code, f"{code} found", severity)


SEVERITY_OUTCOMES = {Severity.FLAG: Outcome.FLAGGED, Severity.REVIEW: Outcome.NEEDS_REVIEW}


@pytest.mark.parametrize("severity", list(Severity))
def test_any_finding_stops_two_faithful_readings_from_passing(severity: Severity) -> None:
    decision = decide(RoleResult(FAITHFUL), RoleResult(FAITHFUL), [finding("lint", severity)], 0)

    assert decision.outcome is SEVERITY_OUTCOMES[severity]
    assert decision.reasons == (f"evidence_{severity}", f"evidence_{severity}:lint")


def test_evidence_reasons_name_each_code_once_flag_group_first() -> None:
    findings = [
        finding("contract_text_in_input", Severity.REVIEW),
        finding("nat_division", Severity.FLAG),
        finding("contract_text_in_input", Severity.REVIEW),
        finding("optparam_hypothesis", Severity.FLAG),
    ]

    decision = decide(RoleResult(FAITHFUL), RoleResult(FAITHFUL), findings, 0)

    assert decision.outcome is Outcome.FLAGGED
    assert decision.reasons == (
        "evidence_flag",
        "evidence_flag:nat_division",
        "evidence_flag:optparam_hypothesis",
        "evidence_review",
        "evidence_review:contract_text_in_input",
    )


def test_a_flag_finding_flags_a_pair_whose_reviews_need_review() -> None:
    decision = decide(
        RoleResult(UNCLEAR), RoleResult(FAITHFUL), [finding("nat_division", Severity.FLAG)], 0
    )

    assert decision.outcome is Outcome.FLAGGED
    assert decision.reasons == ("translator_unclear", "evidence_flag", "evidence_flag:nat_division")


def test_a_review_finding_does_not_soften_an_unconfirmed_mismatch_into_a_pass() -> None:
    decision = decide(
        RoleResult(FAITHFUL),
        RoleResult(MISMATCH, (FAITHFUL,)),
        [finding("contract_text_in_input", Severity.REVIEW)],
        1,
    )

    assert decision == Ruling(
        Outcome.NEEDS_REVIEW,
        (
            "unconfirmed_judge_mismatch",
            "evidence_review",
            "evidence_review:contract_text_in_input",
        ),
        POLICY_VERSION,
    )


# --- precedence and completeness of reasons -------------------------------------------


def test_a_standing_mismatch_flags_even_when_the_other_role_failed() -> None:
    decision = decide(RoleResult(failed(ParseStatus.TRUNCATED)), RoleResult(MISMATCH), [], 0)

    assert decision.outcome is Outcome.FLAGGED
    assert decision.reasons == ("translator_truncated", "judge_mismatch")


def test_one_standing_and_one_unconfirmed_mismatch_flag_and_both_are_named() -> None:
    decision = decide(RoleResult(MISMATCH, (MISMATCH,)), RoleResult(MISMATCH, (UNCLEAR,)), [], 1)

    assert decision.outcome is Outcome.FLAGGED
    assert decision.reasons == ("translator_mismatch", "unconfirmed_judge_mismatch")


def test_both_roles_failing_are_both_named_translator_first() -> None:
    decision = decide(RoleResult(failed(ParseStatus.EMPTY)), RoleResult(UNCLEAR), [], 0)

    assert decision.outcome is Outcome.NEEDS_REVIEW
    assert decision.reasons == ("translator_empty", "judge_unclear")


def test_every_reason_has_a_one_line_description() -> None:
    assert set(REASON_DESCRIPTIONS) == set(Reason)
    for description in REASON_DESCRIPTIONS.values():
        assert description.strip() and "\n" not in description


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("judge_refused", Reason.JUDGE_REFUSED),
        ("evidence_review", Reason.EVIDENCE_REVIEW),
        ("evidence_review:contract_text_in_input", Reason.EVIDENCE_REVIEW),
        ("evidence_flag:a:b", Reason.EVIDENCE_FLAG),
    ],
)
def test_reason_kind_reads_both_shapes(reason: str, kind: Reason) -> None:
    assert reason_kind(reason) is kind


def test_reason_kind_rejects_an_unknown_code() -> None:
    with pytest.raises(ValueError):
        reason_kind("translator_sleepy")


def test_the_policy_version_is_recorded() -> None:
    assert POLICY_VERSION == "policy-3"
    assert decide(RoleResult(FAITHFUL), RoleResult(FAITHFUL), [], 0).policy_version == "policy-3"
