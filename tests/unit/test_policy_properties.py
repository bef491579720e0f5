"""Properties of the decision policy over every combination of inputs (hypothesis)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.policy import Reason, RoleResult, confirmations_needed, decide, reason_kind
from app.policy.reasons import FLAGGING_REASONS
from app.vocabulary import Outcome, ParseStatus, Severity, Verdict

readings = st.builds(
    Reading,
    verdict=st.sampled_from(Verdict),
    parse_status=st.sampled_from(ParseStatus),
    back_translation=st.none() | st.text(max_size=20),
    issues=st.none() | st.text(max_size=20),
    parser_version=st.just("test-parser"),
)
findings = st.lists(
    st.builds(
        Finding,
        code=st.sampled_from(["nat_division", "contract_text_in_input", "optparam"]),
        message=st.text(max_size=10),
        severity=st.sampled_from(Severity),
    ),
    max_size=4,
)
ks = st.integers(min_value=0, max_value=3)


@st.composite
def role_results(draw: st.DrawFn, k: int) -> RoleResult:
    """A reading plus as many repeats as the pipeline may supply for it (0..needed)."""
    reading = draw(readings)
    count = draw(st.integers(0, confirmations_needed(reading, k)))
    return RoleResult(reading, tuple(draw(readings) for _ in range(count)))


@st.composite
def inputs(draw: st.DrawFn) -> tuple[RoleResult, RoleResult, list[Finding], int]:
    k = draw(ks)
    return draw(role_results(k)), draw(role_results(k)), draw(findings), k


@given(inputs())
def test_passed_exactly_when_both_readings_are_ok_faithful_and_no_finding(
    case: tuple[RoleResult, RoleResult, list[Finding], int],
) -> None:
    translator, judge, found, k = case
    clean = translator.reading.is_faithful and judge.reading.is_faithful and not found

    assert (decide(translator, judge, found, k).outcome is Outcome.PASSED) == clean


@given(inputs())
def test_never_passed_when_any_reading_is_not_ok(
    case: tuple[RoleResult, RoleResult, list[Finding], int],
) -> None:
    translator, judge, found, k = case
    statuses = {translator.reading.parse_status, judge.reading.parse_status}

    if statuses != {ParseStatus.OK}:
        assert decide(translator, judge, found, k).outcome is not Outcome.PASSED


@given(inputs())
def test_reasons_are_documented_and_present_exactly_when_not_passed(
    case: tuple[RoleResult, RoleResult, list[Finding], int],
) -> None:
    decision = decide(*case)

    assert bool(decision.reasons) == (decision.outcome is not Outcome.PASSED)
    assert len(set(decision.reasons)) == len(decision.reasons)
    assert all(isinstance(reason_kind(reason), Reason) for reason in decision.reasons)


@given(inputs())
def test_flagged_exactly_when_a_flagging_reason_is_present(
    case: tuple[RoleResult, RoleResult, list[Finding], int],
) -> None:
    decision = decide(*case)
    kinds = {reason_kind(reason) for reason in decision.reasons}

    assert (decision.outcome is Outcome.FLAGGED) == bool(kinds & FLAGGING_REASONS)


@given(inputs())
def test_flag_evidence_always_flags(
    case: tuple[RoleResult, RoleResult, list[Finding], int],
) -> None:
    translator, judge, found, k = case

    if any(item.severity is Severity.FLAG for item in found):
        assert decide(translator, judge, found, k).outcome is Outcome.FLAGGED
