"""The panel policy (policy-4), cell by cell: both rules x each judge faithful / mismatch /
unclear / unreadable. Each test fails if its rule is loosened."""

from __future__ import annotations

import itertools

import pytest

from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.policy import PANEL_POLICY_VERSION, Panel, RoleResult, Ruling, decide_panel, reason_kind
from app.policy.reasons import FLAGGING_REASONS, Reason
from app.vocabulary import Outcome, PanelRule, ParseStatus, Severity, Verdict

JUDGES = ("a", "b", "c")
RULES = list(PanelRule)


def reading(verdict: Verdict, status: ParseStatus = ParseStatus.OK) -> Reading:
    return Reading(verdict, status, None, None, "test-parser")


FAITHFUL = RoleResult(reading(Verdict.FAITHFUL))
MISMATCH = RoleResult(reading(Verdict.MISMATCH))
UNCLEAR = RoleResult(reading(Verdict.UNCLEAR))
TRUNCATED = RoleResult(reading(Verdict.UNCLEAR, ParseStatus.TRUNCATED))
MISSING = RoleResult(reading(Verdict.UNCLEAR, ParseStatus.MISSING))
# An unreadable reply whose text happened to say FAITHFUL still counts as unreadable.
FAITHFUL_BUT_INVALID = RoleResult(reading(Verdict.FAITHFUL, ParseStatus.INVALID))
CELLS = {
    "faithful": FAITHFUL,
    "mismatch": MISMATCH,
    "unclear": UNCLEAR,
    "unreadable": TRUNCATED,
}


def decide(
    judges: dict[str, RoleResult],
    rule: PanelRule,
    translator: RoleResult = FAITHFUL,
    findings: list[Finding] | None = None,
    k: int = 0,
) -> Ruling:
    return decide_panel(translator, judges, Panel(tuple(judges), rule), findings or [], k)


def one_judge(name: str, result: RoleResult) -> dict[str, RoleResult]:
    """`result` for judge `name`, an ok FAITHFUL reading for the others."""
    return {judge: result if judge == name else FAITHFUL for judge in JUDGES}


# ---- Every cell: one judge's reading, the others faithful ---------------------------------


EXPECTED = {
    # (rule, cell) -> (outcome, the reasons with the judge's name as {name})
    (PanelRule.UNANIMOUS, "faithful"): (Outcome.PASSED, ()),
    (PanelRule.UNANIMOUS, "mismatch"): (Outcome.FLAGGED, ("judge_mismatch:{name}",)),
    (PanelRule.UNANIMOUS, "unclear"): (Outcome.NEEDS_REVIEW, ("judge_unclear:{name}",)),
    (PanelRule.UNANIMOUS, "unreadable"): (Outcome.NEEDS_REVIEW, ("judge_truncated:{name}",)),
    (PanelRule.MAJORITY, "faithful"): (Outcome.PASSED, ()),
    # One of three is a minority: a person's look, not a flag, and never a pass.
    (PanelRule.MAJORITY, "mismatch"): (
        Outcome.NEEDS_REVIEW,
        ("panel_split", "judge_minority_mismatch:{name}"),
    ),
    (PanelRule.MAJORITY, "unclear"): (Outcome.NEEDS_REVIEW, ("judge_unclear:{name}",)),
    (PanelRule.MAJORITY, "unreadable"): (Outcome.NEEDS_REVIEW, ("judge_truncated:{name}",)),
}


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("cell", list(CELLS))
@pytest.mark.parametrize("name", JUDGES)
def test_every_cell_for_every_judge(rule: PanelRule, cell: str, name: str) -> None:
    ruling = decide(one_judge(name, CELLS[cell]), rule)

    outcome, reasons = EXPECTED[(rule, cell)]
    assert ruling == Ruling(
        outcome, tuple(r.format(name=name) for r in reasons), PANEL_POLICY_VERSION
    )


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", JUDGES)
def test_an_unreadable_reply_never_passes_whatever_its_text_said(
    rule: PanelRule, name: str
) -> None:
    for result in (FAITHFUL_BUT_INVALID, MISSING):
        ruling = decide(one_judge(name, result), rule)
        assert ruling.outcome is Outcome.NEEDS_REVIEW
        assert ruling.reasons == (f"judge_{result.reading.parse_status.value}:{name}",)


# ---- What the rules differ on: how many standing mismatches flag ---------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("mismatches", [0, 1, 2, 3])
def test_standing_mismatches_out_of_three(rule: PanelRule, mismatches: int) -> None:
    judges = {name: MISMATCH if i < mismatches else FAITHFUL for i, name in enumerate(JUDGES)}
    ruling = decide(judges, rule)

    named = [f"judge_mismatch:{name}" for name in JUDGES[:mismatches]]
    if mismatches == 0:
        assert ruling.outcome is Outcome.PASSED
    elif rule is PanelRule.UNANIMOUS or mismatches >= 2:
        assert (ruling.outcome, ruling.reasons) == (Outcome.FLAGGED, tuple(named))
    else:
        assert ruling.outcome is Outcome.NEEDS_REVIEW
        assert ruling.reasons == ("panel_split", "judge_minority_mismatch:a")


def test_majority_is_more_than_half_so_half_of_four_is_a_split() -> None:
    four = ("a", "b", "c", "d")
    half = {name: MISMATCH if name in ("a", "b") else FAITHFUL for name in four}
    ruling = decide(half, PanelRule.MAJORITY)
    assert ruling.outcome is Outcome.NEEDS_REVIEW
    assert ruling.reasons == (
        "panel_split",
        "judge_minority_mismatch:a",
        "judge_minority_mismatch:b",
    )
    three = {**half, "c": MISMATCH}
    assert decide(three, PanelRule.MAJORITY).outcome is Outcome.FLAGGED


def test_majority_counts_only_standing_mismatches() -> None:
    """With confirmations, an unconfirmed MISMATCH is no vote for a flag."""
    confirmed = RoleResult(reading(Verdict.MISMATCH), (reading(Verdict.MISMATCH),))
    unconfirmed = RoleResult(reading(Verdict.MISMATCH), (reading(Verdict.FAITHFUL),))
    judges = {"a": confirmed, "b": unconfirmed, "c": FAITHFUL}
    ruling = decide(judges, PanelRule.MAJORITY, k=1)
    assert ruling.outcome is Outcome.NEEDS_REVIEW
    assert ruling.reasons == (
        "panel_split",
        "judge_minority_mismatch:a",
        "unconfirmed_judge_mismatch:b",
    )
    unanimous = decide(judges, PanelRule.UNANIMOUS, k=1)
    assert unanimous.outcome is Outcome.FLAGGED
    assert unanimous.reasons == ("judge_mismatch:a", "unconfirmed_judge_mismatch:b")


@pytest.mark.parametrize("rule", RULES)
def test_a_majority_of_faithful_votes_never_outweighs_an_unreadable_reply(rule: PanelRule) -> None:
    judges = {"a": FAITHFUL, "b": FAITHFUL, "c": TRUNCATED}
    assert decide(judges, rule).outcome is Outcome.NEEDS_REVIEW
    # ... nor does a majority of mismatches need the unreadable one to flag.
    flagged = decide({"a": MISMATCH, "b": MISMATCH, "c": TRUNCATED}, PanelRule.MAJORITY)
    assert flagged.outcome is Outcome.FLAGGED
    assert flagged.reasons == ("judge_mismatch:a", "judge_mismatch:b", "judge_truncated:c")


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("translator", [MISMATCH, UNCLEAR, TRUNCATED])
def test_the_translator_is_ruled_as_for_one_judge(rule: PanelRule, translator: RoleResult) -> None:
    ruling = decide(dict.fromkeys(JUDGES, FAITHFUL), rule, translator=translator)
    expected = Outcome.FLAGGED if translator is MISMATCH else Outcome.NEEDS_REVIEW
    assert ruling.outcome is expected
    assert len(ruling.reasons) == 1 and ruling.reasons[0].startswith("translator_")


@pytest.mark.parametrize("rule", RULES)
def test_evidence_still_weighs(rule: PanelRule) -> None:
    finding = Finding("nat_division", "ℕ division", Severity.REVIEW)
    ruling = decide(dict.fromkeys(JUDGES, FAITHFUL), rule, findings=[finding])
    assert ruling.outcome is Outcome.NEEDS_REVIEW
    assert ruling.reasons == ("evidence_review", "evidence_review:nat_division")


# ---- Reasons are qualified by the judge's name, never bare --------------------------------


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize(("a", "b", "c"), list(itertools.product(CELLS.values(), repeat=3)))
def test_every_judge_reason_names_its_judge(
    rule: PanelRule, a: RoleResult, b: RoleResult, c: RoleResult
) -> None:
    ruling = decide({"a": a, "b": b, "c": c}, rule)
    judge_reasons = [r for r in ruling.reasons if r != Reason.PANEL_SPLIT.value]
    for reason in judge_reasons:
        kind, _, name = reason.partition(":")
        assert name in JUDGES, reason
        assert reason_kind(reason).value == kind
    flags = any(reason_kind(r) in FLAGGING_REASONS for r in ruling.reasons)
    assert (ruling.outcome is Outcome.FLAGGED) == flags
    assert (ruling.outcome is Outcome.PASSED) == (not ruling.reasons)
    assert ruling.policy_version == PANEL_POLICY_VERSION


def test_readings_must_match_the_panel() -> None:
    with pytest.raises(ValueError, match="panel"):
        decide_panel(FAITHFUL, {"a": FAITHFUL}, Panel(("a", "b")), [], 0)
    with pytest.raises(ValueError, match="panel"):
        decide_panel(FAITHFUL, {}, Panel(()), [], 0)
