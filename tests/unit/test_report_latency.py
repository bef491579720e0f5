"""Latency quantiles in bounded memory: exact below 10 s, within 0.5% above, and never more
than MAX_LATENCY_BUCKETS counts held, however many latencies a group has."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.reports.stats import (
    EXACT_LATENCY_MS,
    LATENCY_CEILING_MS,
    MAX_LATENCY_BUCKETS,
    LatencyHistogram,
    percentile,
)
from app.reports.summary import ReviewTally
from app.repositories.report_rows import ReviewRow, ScreeningRow

SHARES = (0.0, 0.01, 0.5, 0.9, 0.95, 0.99, 1.0)


def histogram(values: list[int]) -> LatencyHistogram:
    counts = LatencyHistogram()
    for value in values:
        counts.add(value)
    return counts


@given(st.lists(st.integers(0, EXACT_LATENCY_MS - 1), min_size=1))
def test_below_ten_seconds_quantiles_are_exact(values: list[int]) -> None:
    counts = histogram(values)
    for share in SHARES:
        assert counts.quantile(share) == percentile(values, share)


@given(st.lists(st.integers(0, LATENCY_CEILING_MS), min_size=1))
def test_above_ten_seconds_quantiles_are_within_half_a_percent(values: list[int]) -> None:
    counts = histogram(values)
    for share in SHARES:
        exact = percentile(values, share)
        assert exact is not None
        assert counts.quantile(share) == pytest.approx(exact, rel=0.005)


def test_known_latencies_give_known_quantiles() -> None:
    counts = histogram([40, 10, 30, 20])
    assert (counts.quantile(0.5), counts.quantile(0.95)) == (20, 40)
    slow = histogram([60_000] * 95 + [120_000] * 5)
    assert slow.quantile(0.95) == pytest.approx(60_000, rel=0.005)
    assert slow.quantile(0.96) == pytest.approx(120_000, rel=0.005)
    assert slow.quantile(0.95) != slow.quantile(0.96)


def test_out_of_range_latencies_count_at_the_ends() -> None:
    counts = histogram([-5, 10**12])
    assert counts.quantile(0.5) == 0
    assert counts.quantile(1.0) == pytest.approx(LATENCY_CEILING_MS, rel=0.005)
    assert LatencyHistogram().quantile(0.5) is None


def test_a_hundred_thousand_latencies_stay_within_the_cap() -> None:
    rng = random.Random(6)
    values = [int(rng.lognormvariate(9, 3)) for _ in range(100_000)]
    counts = histogram(values)
    assert counts.count == 100_000
    assert counts.buckets <= MAX_LATENCY_BUCKETS < 12_000
    # The draw reaches far past 10 s and fills most of the exact range: the cap is what
    # holds it, not a narrow draw.
    assert max(values) > 10**9 and counts.buckets > EXACT_LATENCY_MS * 0.9
    for share in (0.5, 0.95):
        exact = percentile(values, share)
        assert exact is not None
        assert counts.quantile(share) == pytest.approx(exact, rel=0.005)


def test_a_tally_of_a_hundred_thousand_calls_counts_them_all() -> None:
    """Reviews folded in one at a time (as the repository streams them), none kept."""
    tally = ReviewTally()
    for index in range(100_000):
        tally.add(
            ReviewRow(
                f"s{index % 10}", "judge", index, "review", "m", "p", "faithful", "ok",
                latency_ms=index % 20_000, usage={"prompt_tokens": 1}, http_status=200,
            )
        )  # fmt: skip
    (group,) = tally.summary(
        [ScreeningRow(f"s{i}", "passed", [], None, False) for i in range(10)]
    ).groups
    assert (group.screenings, group.calls, group.tokens["prompt_tokens"]) == (10, 100_000, 100_000)
    assert group.latency_p50_ms == 9_999  # the 50 000th of 5 x 0..19 999
    assert group.latency_p95_ms == pytest.approx(18_999, rel=0.005)
