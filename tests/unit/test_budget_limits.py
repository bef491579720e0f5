"""The budget's arithmetic (app/llm/budget.py), pure: when a call may start, which limit
holds it back, and how a call's tokens are settled."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.llm.budget import (
    BATCH_AHEAD_SECONDS,
    IN_FLIGHT,
    REQUESTS,
    TOKENS,
    Bucket,
    Budget,
    Busy,
    Grant,
    Later,
    Wait,
    admit,
    ahead_for,
    paused,
    settled,
)
from app.llm.gate import estimated_tokens, used_tokens

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return NOW + timedelta(seconds=seconds)


def fresh(**changes: object) -> Bucket:
    values: dict[str, object] = {"next_request_at": NOW, "next_token_at": NOW, "paused_until": None}
    return Bucket(**(values | changes))  # type: ignore[arg-type]


def test_requests_are_spaced_and_tokens_charged_from_the_start() -> None:
    budget = Budget(requests_per_minute=30, tokens_per_minute=600)
    assert admit(fresh(), budget, 50, NOW, 60) == Grant(NOW, at(2), at(5))
    # Held back by whichever limit frees last; each moves on from that start.
    bucket = fresh(next_request_at=at(2), next_token_at=at(5))
    assert admit(bucket, budget, 10, NOW, 60) == Grant(at(5), at(7), at(6))


def test_a_start_past_the_horizon_names_the_limit_that_holds_it() -> None:
    budget = Budget(requests_per_minute=30, tokens_per_minute=600)
    assert admit(fresh(next_request_at=at(9)), budget, 1, NOW, 8) == Wait(9, REQUESTS)
    assert admit(fresh(next_token_at=at(9)), budget, 1, NOW, 8) == Wait(9, TOKENS)
    # A provider's pause is the provider's ask, not a limit of the budget.
    assert admit(fresh(paused_until=at(9)), budget, 1, NOW, 8) == Wait(9, None)
    # A limit that is not set holds nothing back, whatever the row says.
    assert isinstance(admit(fresh(next_token_at=at(9)), Budget(30), 1, NOW, 8), Grant)


def test_every_slot_in_flight_taken_is_busy() -> None:
    budget = Budget(max_in_flight=2)
    assert admit(fresh(in_flight=2), budget, 1, NOW, 60) == Busy()
    assert isinstance(admit(fresh(in_flight=1), budget, 1, NOW, 60), Grant)
    assert IN_FLIGHT.startswith("shared budget")


def test_tokens_are_settled_both_ways() -> None:
    budget = Budget(tokens_per_minute=600)
    assert settled(at(10), budget, charged=100, used=20) == at(2)
    assert settled(at(10), budget, charged=100, used=130) == at(13)
    assert settled(at(10), Budget(requests_per_minute=5), charged=100, used=1) == at(10)


def test_a_pause_is_never_shortened() -> None:
    assert paused(None, NOW, 30) == at(30)
    assert paused(at(60), NOW, 30) == at(60)
    assert paused(at(10), NOW, 30) == at(30)


def test_the_strictest_of_two_budgets_takes_each_lower_limit() -> None:
    assert Budget(60, 0, 4).strictest(Budget(0, 1000, 8)) == Budget(60, 1000, 4)
    assert Budget().unlimited and not Budget(max_in_flight=1).unlimited


def test_estimates_and_usage() -> None:
    messages = [{"role": "system", "content": "x" * 30}, {"role": "user", "content": "y" * 31}]
    assert estimated_tokens(messages, 500) == 21 + 500  # 61 characters / 3, rounded up
    assert used_tokens({"total_tokens": 42, "prompt_tokens": 1}) == 42
    assert used_tokens({"prompt_tokens": 30, "completion_tokens": 12}) == 42
    assert used_tokens({"prompt_tokens": 30}) is None


def test_a_batch_call_reserves_no_further_ahead_than_batch_ahead_seconds() -> None:
    budget = Budget(requests_per_minute=600)  # 0.1 s apart
    assert ahead_for(batch=True, horizon=30) == BATCH_AHEAD_SECONDS == 0.25
    assert ahead_for(batch=False, horizon=30) == 30
    assert ahead_for(batch=True, horizon=0.1) == 0.1
    # Batch calls one after another on one clock: granted while the start is within 0.25 s.
    bucket, starts = fresh(), []
    while True:
        decision = admit(bucket, budget, 10, NOW, 30, ahead_for(batch=True, horizon=30))
        if not isinstance(decision, Grant):
            break
        starts.append(decision.start)
        bucket = fresh(next_request_at=decision.next_request_at)
    assert max(starts) <= at(BATCH_AHEAD_SECONDS)
    assert len(starts) == 3  # 0.0, 0.1, 0.2 s
    # The next is told to ask again once its start is within reach, not to back off.
    assert isinstance(decision, Later) and decision.limit == REQUESTS
    assert abs(decision.seconds - 0.05) < 1e-6  # its start, 0.3 s, less the 0.25 s
    # An interactive call still reserves the next free start, just past the batch ones.
    interactive = admit(bucket, budget, 10, NOW, 30, ahead_for(batch=False, horizon=30))
    assert isinstance(interactive, Grant) and interactive.start == bucket.next_request_at


def test_a_start_past_the_horizon_is_a_wait_for_batch_calls_too() -> None:
    decision = admit(fresh(next_request_at=at(40)), Budget(60), 10, NOW, 30, 1.0)
    assert decision == Wait(40, REQUESTS)


def test_batch_calls_leave_the_interactive_reserve_of_calls_in_flight() -> None:
    # reserve = max(1, max_in_flight // 10) from 2 up; none for a single slot.
    reserves = {n: Budget(max_in_flight=n).interactive_reserve for n in (1, 2, 9, 10, 19, 20, 64)}
    assert reserves == {1: 0, 2: 1, 9: 1, 10: 1, 19: 1, 20: 2, 64: 6}
    budget = Budget(max_in_flight=20)
    assert admit(fresh(in_flight=18), budget, 1, NOW, 60, batch=True) == Busy()
    assert isinstance(admit(fresh(in_flight=17), budget, 1, NOW, 60, batch=True), Grant)
    assert isinstance(admit(fresh(in_flight=19), budget, 1, NOW, 60), Grant)
    assert admit(fresh(in_flight=20), budget, 1, NOW, 60) == Busy()
    # One slot: a batch call may take it (else batch work could never run).
    assert isinstance(admit(fresh(), Budget(max_in_flight=1), 1, NOW, 60, batch=True), Grant)
