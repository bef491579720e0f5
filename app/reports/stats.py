"""Pure statistics for reports: Wilson intervals, Cohen's kappa, rates with their intervals."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

Z_95 = 1.96
# Below this many cases a percentage says more than the data does: such cells say so.
TOO_FEW = 10


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float] | None:
    """The Wilson score interval for successes/n; None when n is 0 (nothing to estimate)."""
    if n == 0:
        return None
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be within 0..{n}, not {successes}")
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    spread = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return max(0.0, centre - spread), min(1.0, centre + spread)


def cohens_kappa(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Agreement between two raters beyond chance. None with no pairs, or when chance
    agreement is certain (both raters always gave one and the same label: kappa is 0/0)."""
    both = list(pairs)
    if not both:
        return None
    n = len(both)
    observed = sum(1 for a, b in both if a == b) / n
    first, second = Counter(a for a, _ in both), Counter(b for _, b in both)
    expected = sum(first[label] * second[label] for label in first) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True, slots=True)
class Rate:
    """numerator/denominator with its 95% Wilson interval; value/low/high are None at 0/0."""

    numerator: int
    denominator: int
    value: float | None
    low: float | None
    high: float | None
    too_few: bool

    @classmethod
    def of(cls, numerator: int, denominator: int) -> Rate:
        interval = wilson_interval(numerator, denominator)
        value = numerator / denominator if denominator else None
        low, high = interval if interval else (None, None)
        return cls(numerator, denominator, value, low, high, denominator < TOO_FEW)


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (share in 0..1) of values; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]
