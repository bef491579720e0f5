"""The plan decides the next call of a role from the calls already stored."""

from __future__ import annotations

import pytest

from app.contract import parse_reply
from app.contract.reading import Reading
from app.pipeline.plan import Limits, NextCall, PastCall, plan_next
from app.policy import RoleResult
from app.vocabulary import FORMAT_RETRY_STATUSES, ParseStatus, Purpose, Verdict

LIMITS = Limits(format_retries=2, confirmations=0, max_tokens=100, max_tokens_ceiling=350)


def reading(status: ParseStatus, verdict: Verdict = Verdict.UNCLEAR) -> Reading:
    if status is not ParseStatus.OK:
        verdict = Verdict.UNCLEAR
    return Reading(verdict, status, None, None, "test")


def call(
    attempt: int,
    status: ParseStatus,
    verdict: Verdict = Verdict.UNCLEAR,
    purpose: Purpose = Purpose.REVIEW,
    max_tokens: int = 100,
) -> PastCall:
    return PastCall(attempt, purpose, reading(status, verdict), "raw", max_tokens)


OK_FAITHFUL = (ParseStatus.OK, Verdict.FAITHFUL)
OK_MISMATCH = (ParseStatus.OK, Verdict.MISMATCH)


def test_first_call_is_a_review() -> None:
    step = plan_next([], LIMITS)
    assert step == NextCall(attempt=1, purpose=Purpose.REVIEW, max_tokens=100)


@pytest.mark.parametrize("verdict", list(Verdict))
def test_an_ok_reply_is_the_answer_whatever_its_verdict(verdict: Verdict) -> None:
    step = plan_next([call(1, ParseStatus.OK, verdict)], LIMITS)
    assert isinstance(step, RoleResult)
    assert step.reading.verdict is verdict
    assert step.confirmations == ()


@pytest.mark.parametrize("status", sorted(FORMAT_RETRY_STATUSES))
def test_unreadable_replies_are_asked_again_as_format_retries(status: ParseStatus) -> None:
    step = plan_next([call(1, status)], LIMITS)
    assert isinstance(step, NextCall)
    assert step.purpose is Purpose.FORMAT_RETRY
    assert step.attempt == 2
    assert step.retry_of is not None and step.retry_of.attempt == 1


@pytest.mark.parametrize("status", [ParseStatus.PROVIDER_ERROR, ParseStatus.REFUSED])
def test_failed_calls_and_refusals_are_not_format_retried(status: ParseStatus) -> None:
    step = plan_next([call(1, status)], LIMITS)
    assert isinstance(step, RoleResult)
    assert step.reading.parse_status is status


def test_format_retries_are_bounded_and_the_last_cause_stands() -> None:
    past = [
        call(1, ParseStatus.MISSING),
        call(2, ParseStatus.INVALID, purpose=Purpose.FORMAT_RETRY),
    ]
    assert isinstance(plan_next(past, LIMITS), NextCall)
    past.append(call(3, ParseStatus.CONFLICTING, purpose=Purpose.FORMAT_RETRY))
    step = plan_next(past, LIMITS)
    assert isinstance(step, RoleResult)
    assert step.reading.parse_status is ParseStatus.CONFLICTING


def test_zero_format_retries_means_no_retry() -> None:
    limits = Limits(format_retries=0, confirmations=0, max_tokens=100, max_tokens_ceiling=350)
    step = plan_next([call(1, ParseStatus.MISSING)], limits)
    assert isinstance(step, RoleResult)


def test_the_first_ok_reading_is_used() -> None:
    past = [
        call(1, ParseStatus.BARE_CR),
        call(2, *OK_MISMATCH, purpose=Purpose.FORMAT_RETRY),
    ]
    step = plan_next(past, LIMITS)
    assert isinstance(step, RoleResult)
    assert step.reading.verdict is Verdict.MISMATCH


def test_truncated_replies_are_asked_again_with_doubled_tokens_up_to_the_ceiling() -> None:
    first = plan_next([call(1, ParseStatus.TRUNCATED, max_tokens=100)], LIMITS)
    assert isinstance(first, NextCall) and first.max_tokens == 200
    past = [
        call(1, ParseStatus.TRUNCATED, max_tokens=100),
        call(2, ParseStatus.TRUNCATED, purpose=Purpose.FORMAT_RETRY, max_tokens=200),
    ]
    second = plan_next(past, LIMITS)
    assert isinstance(second, NextCall) and second.max_tokens == 350


def test_a_mismatch_is_confirmed_when_asked() -> None:
    limits = Limits(format_retries=2, confirmations=2, max_tokens=100, max_tokens_ceiling=350)
    past = [call(1, *OK_MISMATCH)]
    step = plan_next(past, limits)
    assert isinstance(step, NextCall) and step.purpose is Purpose.CONFIRMATION
    past.append(call(2, *OK_FAITHFUL, purpose=Purpose.CONFIRMATION))
    step = plan_next(past, limits)
    assert isinstance(step, NextCall) and step.purpose is Purpose.CONFIRMATION and step.attempt == 3
    past.append(call(3, *OK_FAITHFUL, purpose=Purpose.CONFIRMATION))
    done = plan_next(past, limits)
    assert isinstance(done, RoleResult)
    assert [r.verdict for r in done.confirmations] == [Verdict.FAITHFUL, Verdict.FAITHFUL]


def test_confirmations_stop_at_the_first_repeated_mismatch() -> None:
    limits = Limits(format_retries=2, confirmations=3, max_tokens=100, max_tokens_ceiling=350)
    past = [call(1, *OK_MISMATCH), call(2, *OK_MISMATCH, purpose=Purpose.CONFIRMATION)]
    done = plan_next(past, limits)
    assert isinstance(done, RoleResult)
    assert len(done.confirmations) == 1


@pytest.mark.parametrize("verdict", [Verdict.FAITHFUL, Verdict.UNCLEAR])
def test_only_mismatches_are_confirmed(verdict: Verdict) -> None:
    limits = Limits(format_retries=2, confirmations=2, max_tokens=100, max_tokens_ceiling=350)
    assert isinstance(plan_next([call(1, ParseStatus.OK, verdict)], limits), RoleResult)


def test_resuming_after_a_crash_continues_from_the_stored_calls() -> None:
    # A re-run sees the two calls stored before the crash and asks only the third.
    past = [call(1, ParseStatus.MISSING), call(2, ParseStatus.EMPTY, purpose=Purpose.FORMAT_RETRY)]
    step = plan_next(past, LIMITS)
    assert isinstance(step, NextCall) and step.attempt == 3


def test_an_ambiguous_reply_is_asked_again_as_a_format_retry() -> None:
    # contract-1 read this as ok/faithful, and the plan took it as the role's answer.
    ambiguous = parse_reply("ISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL")
    first = PastCall(1, Purpose.REVIEW, ambiguous, "raw", 100)

    step = plan_next([first], LIMITS)
    assert isinstance(step, NextCall) and step.purpose is Purpose.FORMAT_RETRY
    assert step.retry_of is not None and step.retry_of.reading.parse_status is ParseStatus.AMBIGUOUS

    answered = [
        first,
        PastCall(2, Purpose.FORMAT_RETRY, parse_reply("VERDICT: MISMATCH"), "r", 100),
    ]
    result = plan_next(answered, LIMITS)
    assert isinstance(result, RoleResult) and result.reading.is_mismatch


def test_an_ambiguous_reply_stands_with_its_cause_when_retries_run_out() -> None:
    ambiguous = parse_reply("ISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL")
    past = [PastCall(attempt, Purpose.FORMAT_RETRY if attempt > 1 else Purpose.REVIEW, ambiguous,
                     "raw", 100) for attempt in (1, 2, 3)]  # fmt: skip
    result = plan_next(past, LIMITS)
    assert isinstance(result, RoleResult)
    assert result.reading.parse_status is ParseStatus.AMBIGUOUS and not result.reading.is_faithful
