"""The exact McNemar p-value against an independent implementation: the binomial tail in
exact integers (each term from the last by C(n, i+1) = C(n, i)(n-i)/(i+1), no float), over
many (a_only, b_only) including large, lopsided and tied counts."""

from __future__ import annotations

from fractions import Fraction

import pytest

from app.calibration.compare import mcnemar_exact


def exact_p(a_only: int, b_only: int) -> float:
    n, k = a_only + b_only, min(a_only, b_only)
    term, tail = 1, 1
    for i in range(k):
        term = term * (n - i) // (i + 1)
        tail += term
    return float(min(Fraction(1), Fraction(2 * tail, 2**n)))


SMALL = [(a, b) for a in range(0, 41) for b in range(0, 41)]
LARGE = [
    (2000, 2000),
    (3000, 3000),
    (1990, 2010),
    (2900, 3100),
    (4000, 5000),
    (1, 20_000),
    (0, 50_000),
    (150, 9_000),
    (12_345, 12_999),
    (24_000, 25_000),
    (9_000, 11_000),
]


@pytest.mark.parametrize(("a_only", "b_only"), SMALL + LARGE)
def test_matches_the_exact_binomial_tail(a_only: int, b_only: int) -> None:
    expected = exact_p(a_only, b_only)
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-9, abs=0.0)
    assert mcnemar_exact(b_only, a_only) == mcnemar_exact(a_only, b_only)
