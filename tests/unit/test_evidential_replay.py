"""The flag each review recorded (FAITHSCREEN_*_EVIDENTIAL when its call was made) decides
whether a role's result is evidential, in the pipeline's plan and in a re-score's replay:
fail closed, one call to a model marked not evidential is enough."""

from __future__ import annotations

from dataclasses import replace

from app.contract import read_call
from app.contract.reading import Reading
from app.pipeline.plan import Limits, PastCall, plan_next
from app.policy import RoleResult
from app.repositories.rescore_rows import StoredCall
from app.rescore.replay import replay, replay_role
from app.vocabulary import Pair, ParseStatus, Purpose, Role, Verdict
from tests.support.scripted_openai import contract_reply

LIMITS = Limits(format_retries=2, confirmations=1, max_tokens=100, max_tokens_ceiling=350)
PAIR = Pair("For every natural number n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n := by sorry")
FAITHFUL = contract_reply("FAITHFUL")
MISMATCH = contract_reply("MISMATCH", issues="the conclusion is weaker")


def past(attempt: int, status: ParseStatus, verdict: Verdict, *, evidential: bool) -> PastCall:
    purpose = Purpose.REVIEW if attempt == 1 else Purpose.FORMAT_RETRY
    reading = Reading(verdict, status, None, None, "test")
    return PastCall(attempt, purpose, reading, "raw", 100, evidential=evidential)


def test_the_plan_carries_the_flag_of_the_calls_it_rests_on() -> None:
    marked = plan_next([past(1, ParseStatus.OK, Verdict.FAITHFUL, evidential=False)], LIMITS)
    assert isinstance(marked, RoleResult) and marked.evidential is False
    plain = plan_next([past(1, ParseStatus.OK, Verdict.FAITHFUL, evidential=True)], LIMITS)
    assert isinstance(plain, RoleResult) and plain.evidential is True


def test_a_role_resumed_on_another_model_is_evidence_only_if_every_call_was() -> None:
    calls = [
        past(1, ParseStatus.TRUNCATED, Verdict.UNCLEAR, evidential=False),
        past(2, ParseStatus.OK, Verdict.FAITHFUL, evidential=True),
    ]
    result = plan_next(calls, LIMITS)
    assert isinstance(result, RoleResult) and result.evidential is False
    exhausted = [*calls[:1], replace(calls[0], attempt=2), replace(calls[0], attempt=3)]
    last = plan_next(exhausted, LIMITS)
    assert isinstance(last, RoleResult) and last.evidential is False


def stored(review_id: int, role: Role, raw: str, *, evidential: bool = True) -> StoredCall:
    reading = read_call(raw, "stop")
    return StoredCall(
        review_id, role, 1, Purpose.REVIEW, raw, "stop", reading, evidential=evidential
    )


def test_a_replay_rules_with_the_recorded_flag() -> None:
    calls = [
        stored(1, Role.TRANSLATOR, FAITHFUL),
        stored(2, Role.JUDGE, FAITHFUL, evidential=False),
    ]
    ruling = replay(PAIR, calls, confirmations=0, format_retries=2).ruling.ruling
    assert (ruling.outcome.value, ruling.reasons) == ("needs_review", ("judge_non_evidential",))
    calls[1] = stored(2, Role.JUDGE, FAITHFUL)
    ruling = replay(PAIR, calls, confirmations=0, format_retries=2).ruling.ruling
    assert (ruling.outcome.value, ruling.reasons) == ("passed", ())


def test_a_replay_stopped_short_keeps_the_flag() -> None:
    # The plan wants a confirmation that was never made: the replay ends there, and the
    # result it gives still carries the recorded flag.
    call = stored(1, Role.TRANSLATOR, MISMATCH, evidential=False)
    done = replay_role([call], {1: call.reading}, LIMITS)
    assert done.incomplete
    assert done.result.evidential is False
