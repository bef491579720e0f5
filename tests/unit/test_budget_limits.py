"""The budget's arithmetic (app/llm/budget.py), pure: when a call may start, which limit
holds it back, and how a call's tokens are settled."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

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
    interactive_tolerance,
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
    # 100 tokens take 10 s of 600 a minute: no interactive tolerance (budget.py).
    assert admit(fresh(next_token_at=at(9)), budget, 100, NOW, 8) == Wait(9, TOKENS)
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
        decision = admit(bucket, budget, 10, NOW, 30, ahead_for(batch=True, horizon=30), batch=True)
        if not isinstance(decision, Grant):
            break
        starts.append(decision.start)
        bucket = fresh(next_request_at=decision.next_request_at)
    assert max(starts) <= at(BATCH_AHEAD_SECONDS)
    assert len(starts) == 3  # 0.0, 0.1, 0.2 s
    # The next is told to ask again once its start is within reach, not to back off.
    assert isinstance(decision, Later) and decision.limit == REQUESTS
    assert abs(decision.seconds - 0.05) < 1e-6  # its start, 0.3 s, less the 0.25 s
    # An interactive call starts now, within its tolerance (0.35 s at 0.1 s apart) of the
    # next free start, 0.3 s; the schedule moves on a whole interval from there.
    interactive = admit(bucket, budget, 10, NOW, 30, ahead_for(batch=False, horizon=30))
    assert interactive == Grant(NOW, at(0.4), NOW)


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


def test_the_interactive_tolerance_by_interval() -> None:
    # min(BATCH_AHEAD_SECONDS + interval, 1 s - 2 intervals), never below 0.
    tolerances = {rpm: round(interactive_tolerance(60 / rpm), 3) for rpm in (60, 120, 240, 720)}
    assert tolerances == {60: 0.0, 120: 0.0, 240: 0.5, 720: 0.333}
    assert interactive_tolerance(0.0) == BATCH_AHEAD_SECONDS
    assert interactive_tolerance(5.0) == 0.0


def test_an_interactive_call_starts_before_batch_reservations_and_a_batch_call_does_not() -> None:
    budget = Budget(requests_per_minute=240)  # 0.25 s apart
    held = fresh(next_request_at=at(0.5))  # batch calls reserved up to 0.25 s ahead
    assert admit(held, budget, 10, NOW, 30) == Grant(NOW, at(0.75), NOW)
    batch = admit(held, budget, 10, NOW, 30, ahead_for(batch=True, horizon=30), batch=True)
    assert isinstance(batch, Later) and abs(batch.seconds - 0.25) < 1e-9
    # The tolerance never reaches past a provider's pause.
    paused_bucket = fresh(next_request_at=at(0.5), paused_until=at(2))
    assert admit(paused_bucket, budget, 10, NOW, 30) == Grant(at(2), at(2.25), NOW)


@pytest.mark.parametrize("rpm", [61, 90, 120, 150, 240, 600, 720, 3000])
def test_mixed_calls_never_exceed_a_provider_holding_one_second_of_its_limit(rpm: int) -> None:
    """Callers of both kinds ask at random times on one clock, reserving and starting
    in any order; a provider bucket of one second's calls (bench/limited_provider.py)
    takes every start, and the long run's rate is the limit's."""
    rng = random.Random(rpm)
    budget = Budget(requests_per_minute=rpm, tokens_per_minute=rpm * 2000)
    bucket, calls = fresh(), []  # (start in seconds, tokens) of each call granted
    clock = 0.0
    for _ in range(3000):
        clock += rng.expovariate(rpm / 60 * 3)  # asked three times as often as allowed
        batch = rng.random() < 0.7
        tokens = rng.choice([50, 400, 900])
        now = at(clock)
        decision = admit(bucket, budget, tokens, now, 30, ahead_for(batch, 30), batch=batch)
        if isinstance(decision, Grant):
            calls.append(((decision.start - NOW).total_seconds(), tokens))
            bucket = fresh(
                next_request_at=decision.next_request_at, next_token_at=decision.next_token_at
            )
    calls.sort()
    assert _refused([(start, 1) for start, _ in calls], rate=rpm / 60) == []
    assert _refused(calls, rate=rpm * 2000 / 60) == []
    starts = [start for start, _ in calls]
    # GCRA: the starts in a span hold at most (span + tolerance) / interval + 1 calls; the
    # interval as stored, to the microsecond.
    span, interval = max(starts) - min(starts), timedelta(seconds=60 / rpm).total_seconds()
    assert len(starts) <= (span + interactive_tolerance(60 / rpm)) / interval + 1 + 1e-6


def _refused(calls: list[tuple[float, int]], rate: float) -> list[tuple[float, int]]:
    """The (start, size) calls a token bucket of one second's `rate` (starting full) would
    refuse, taken in start order."""
    capacity = max(1.0, rate)
    level, last, refused = capacity, None, []
    for when, size in calls:
        if last is not None:
            level = min(capacity, level + (when - last) * rate)
        last = when
        if level + 1e-9 < size:
            refused.append((when, size))
        else:
            level -= size
    return refused
