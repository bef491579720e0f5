"""A model marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false): its FAITHFUL never counts
towards `passed`, its other readings are ruled as anyone's. Rule 1a of `policy-3` and rule 6
of the panel's `policy-4`; each test fails if the rule is loosened."""

from __future__ import annotations

import itertools

import pytest

from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.policy import (
    PANEL_POLICY_VERSION,
    POLICY_VERSION,
    REASON_DESCRIPTIONS,
    Panel,
    Reason,
    RoleResult,
    decide,
    decide_panel,
)
from app.policy.reasons import FLAGGING_REASONS
from app.vocabulary import Outcome, PanelRule, ParseStatus, Role, Severity, Verdict


def reading(verdict: Verdict, status: ParseStatus = ParseStatus.OK) -> Reading:
    return Reading(verdict, status, None, None, "test-parser")


FAITHFUL = reading(Verdict.FAITHFUL)
MISMATCH = reading(Verdict.MISMATCH)
UNCLEAR = reading(Verdict.UNCLEAR)
EVIDENTIAL = RoleResult(FAITHFUL)


def not_evidential(result: Reading, *repeats: Reading) -> RoleResult:
    return RoleResult(result, tuple(repeats), evidential=False)


def decide_one(role: Role, result: RoleResult, k: int = 0) -> tuple[Outcome, tuple[str, ...]]:
    """`result` for `role`, an evidential ok FAITHFUL for the other role."""
    pair = (result, EVIDENTIAL) if role is Role.TRANSLATOR else (EVIDENTIAL, result)
    ruling = decide(*pair, [], k)
    return ruling.outcome, ruling.reasons


@pytest.mark.parametrize("role", list(Role))
def test_a_faithful_from_a_model_that_is_not_evidence_never_passes(role: Role) -> None:
    assert decide_one(role, not_evidential(FAITHFUL)) == (
        Outcome.NEEDS_REVIEW,
        (f"{role}_non_evidential",),
    )
    # The same reading from an evidential model passes: the flag alone decides.
    assert decide_one(role, RoleResult(FAITHFUL)) == (Outcome.PASSED, ())


def test_both_roles_not_evidential_are_both_named() -> None:
    ruling = decide(not_evidential(FAITHFUL), not_evidential(FAITHFUL), [], 0)
    assert (ruling.outcome, ruling.reasons) == (
        Outcome.NEEDS_REVIEW,
        ("translator_non_evidential", "judge_non_evidential"),
    )


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize(
    ("status", "verdict"),
    [
        (status, verdict)
        for status, verdict in itertools.product(ParseStatus, Verdict)
        if (status, verdict) != (ParseStatus.OK, Verdict.FAITHFUL)
    ],
)
def test_every_other_reading_is_ruled_as_an_evidential_models(
    role: Role, status: ParseStatus, verdict: Verdict
) -> None:
    # Its MISMATCH still flags; its UNCLEAR and unreadable replies need review as anyone's.
    for k in (0, 1):
        result = reading(verdict, status)
        assert decide_one(role, not_evidential(result), k) == decide_one(
            role, RoleResult(result), k
        )


@pytest.mark.parametrize("role", list(Role))
def test_its_confirmed_mismatch_flags_and_its_unconfirmed_one_needs_review(role: Role) -> None:
    assert decide_one(role, not_evidential(MISMATCH, MISMATCH), k=1) == (
        Outcome.FLAGGED,
        (f"{role}_mismatch",),
    )
    assert decide_one(role, not_evidential(MISMATCH, FAITHFUL), k=1) == (
        Outcome.NEEDS_REVIEW,
        (f"unconfirmed_{role}_mismatch",),
    )


def test_evidence_still_flags_beside_a_non_evidential_faithful() -> None:
    finding = Finding("binder_default", "a default value in a binder", Severity.FLAG)
    ruling = decide(not_evidential(FAITHFUL), EVIDENTIAL, [finding], 0)
    assert ruling.outcome is Outcome.FLAGGED
    assert ruling.reasons[0] == "translator_non_evidential"


def test_the_reasons_need_review_and_are_described() -> None:
    for reason in (Reason.TRANSLATOR_NON_EVIDENTIAL, Reason.JUDGE_NON_EVIDENTIAL):
        assert reason not in FLAGGING_REASONS
        assert "not evidential" in REASON_DESCRIPTIONS[reason]


def test_the_versions_say_the_rule_is_there() -> None:
    assert (POLICY_VERSION, PANEL_POLICY_VERSION) == ("policy-3", "policy-4")


# ---- A panel: every judge's FAITHFUL is required, so each must be evidential ----------------


def panel(rule: PanelRule, **judges: RoleResult) -> tuple[Outcome, tuple[str, ...]]:
    ruling = decide_panel(EVIDENTIAL, judges, Panel(tuple(judges), rule), [], 0)
    assert ruling.policy_version == PANEL_POLICY_VERSION
    return ruling.outcome, ruling.reasons


@pytest.mark.parametrize("rule", list(PanelRule))
def test_one_non_evidential_faithful_judge_keeps_an_evidential_majority_from_passing(
    rule: PanelRule,
) -> None:
    result = panel(rule, a=EVIDENTIAL, b=EVIDENTIAL, c=not_evidential(FAITHFUL))
    assert result == (Outcome.NEEDS_REVIEW, ("judge_non_evidential:c",))
    assert panel(rule, a=EVIDENTIAL, b=EVIDENTIAL, c=EVIDENTIAL) == (Outcome.PASSED, ())


def test_a_non_evidential_judges_mismatch_is_a_vote_like_any_other() -> None:
    unanimous = panel(PanelRule.UNANIMOUS, a=EVIDENTIAL, b=not_evidential(MISMATCH))
    assert unanimous == (Outcome.FLAGGED, ("judge_mismatch:b",))
    minority = panel(PanelRule.MAJORITY, a=EVIDENTIAL, b=EVIDENTIAL, c=not_evidential(MISMATCH))
    assert minority == (Outcome.NEEDS_REVIEW, ("panel_split", "judge_minority_mismatch:c"))
    majority = panel(
        PanelRule.MAJORITY, a=RoleResult(MISMATCH), b=EVIDENTIAL, c=not_evidential(MISMATCH)
    )
    assert majority == (Outcome.FLAGGED, ("judge_mismatch:a", "judge_mismatch:c"))


def test_a_non_evidential_translators_faithful_holds_a_panel_back() -> None:
    judges = {"a": EVIDENTIAL, "b": EVIDENTIAL}
    ruling = decide_panel(not_evidential(FAITHFUL), judges, Panel(("a", "b")), [], 0)
    assert (ruling.outcome, ruling.reasons) == (
        Outcome.NEEDS_REVIEW,
        ("translator_non_evidential",),
    )


def test_an_unclear_non_evidential_judge_is_only_unclear() -> None:
    assert panel(PanelRule.UNANIMOUS, a=EVIDENTIAL, b=not_evidential(UNCLEAR)) == (
        Outcome.NEEDS_REVIEW,
        ("judge_unclear:b",),
    )
