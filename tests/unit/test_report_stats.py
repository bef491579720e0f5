"""Wilson intervals, Cohen's kappa, rates and percentiles against known values."""

from __future__ import annotations

import pytest

from app.reports.stats import Rate, cohens_kappa, percentile, wilson_interval


def test_wilson_interval_of_8_in_10_is_the_published_one() -> None:
    interval = wilson_interval(8, 10)
    assert interval is not None
    assert interval == pytest.approx((0.4902, 0.9433), abs=5e-4)


def test_wilson_interval_at_the_edges_stays_within_0_and_1() -> None:
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=5e-4)


def test_wilson_interval_of_nothing_is_none() -> None:
    assert wilson_interval(0, 0) is None


def test_wilson_interval_refuses_more_successes_than_cases() -> None:
    with pytest.raises(ValueError):
        wilson_interval(11, 10)


def test_kappa_of_the_textbook_table_is_0_4() -> None:
    # Wikipedia's example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohens_kappa(pairs) == pytest.approx(0.4)


def test_kappa_of_a_second_textbook_table() -> None:
    # 45 yes/yes, 15 yes/no, 25 no/yes, 15 no/no: po 0.6, pe 0.54 -> 0.1304.
    pairs = [("y", "y")] * 45 + [("y", "n")] * 15 + [("n", "y")] * 25 + [("n", "n")] * 15
    assert cohens_kappa(pairs) == pytest.approx(0.06 / 0.46)


def test_kappa_of_perfect_agreement_over_two_labels_is_1() -> None:
    assert cohens_kappa([("a", "a"), ("b", "b"), ("a", "a")]) == pytest.approx(1.0)


def test_kappa_of_systematic_disagreement_is_negative() -> None:
    assert cohens_kappa([("a", "b"), ("b", "a")]) == pytest.approx(-1.0)


def test_kappa_is_none_with_no_pairs_or_one_shared_label() -> None:
    assert cohens_kappa([]) is None
    assert cohens_kappa([("a", "a"), ("a", "a")]) is None


def test_rate_carries_its_interval_and_flags_small_cells() -> None:
    rate = Rate.of(8, 10)
    assert (rate.numerator, rate.denominator, rate.value) == (8, 10, 0.8)
    assert (rate.low, rate.high) == pytest.approx((0.4902, 0.9433), abs=5e-4)
    assert rate.too_few is False
    assert Rate.of(3, 9).too_few is True


def test_rate_of_nothing_has_no_value() -> None:
    rate = Rate.of(0, 0)
    assert (rate.value, rate.low, rate.high, rate.too_few) == (None, None, None, True)


def test_percentile_is_nearest_rank() -> None:
    values = [50, 10, 40, 20, 30]
    assert percentile(values, 0.5) == 30
    assert percentile(values, 0.95) == 50
    assert percentile(list(range(1, 101)), 0.95) == 95
    assert percentile([], 0.5) is None
