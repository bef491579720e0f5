"""Pure statistics for reports: Wilson intervals, Cohen's kappa, rates with their intervals,
and latency quantiles in bounded memory."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

Z_95 = 1.96
# Below this many cases a percentage says more than the data does: such cells say so.
TOO_FEW = 10
TOO_FEW_LABEL = f"n<{TOO_FEW}"


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

    @property
    def counts(self) -> str:
        return f"{self.numerator}/{self.denominator}"

    def shown(self) -> Share | None:
        """The share and its interval to show, or None where a percentage would mislead:
        fewer than TOO_FEW cases (none included). Such a cell shows TOO_FEW_LABEL and its
        counts instead; every rendering of a rate goes through here."""
        if self.too_few or self.value is None or self.low is None or self.high is None:
            return None
        return Share(self.value, self.low, self.high)


@dataclass(frozen=True, slots=True)
class Share:
    value: float
    low: float
    high: float


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (share in 0..1) of values; None when there are none."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return ordered[rank - 1]


# Latencies are counted per integer millisecond below EXACT_LATENCY_MS; above it, in buckets
# each LATENCY_GROWTH times as wide as the one before, up to LATENCY_CEILING_MS.
EXACT_LATENCY_MS = 10_000
LATENCY_GROWTH = 1.01
LATENCY_CEILING_MS = 2**31 - 1  # 24.8 days: the stored column's range, far past any call
LOG_BUCKETS = math.ceil(math.log(LATENCY_CEILING_MS / EXACT_LATENCY_MS, LATENCY_GROWTH)) + 1
MAX_LATENCY_BUCKETS = EXACT_LATENCY_MS + LOG_BUCKETS  # 11 235


class LatencyHistogram:
    """Latencies counted in bounded memory, for nearest-rank quantiles.

    Below 10 000 ms each integer millisecond has its own count, so a quantile there is
    exactly `percentile` of the same values. From 10 s up, a bucket spans [lo, 1.01 lo) and a
    quantile falling in it is reported as the bucket's geometric middle, within 0.5% of the
    exact value. A negative latency counts as 0 and one past LATENCY_CEILING_MS as the
    ceiling. However many values are added, at most MAX_LATENCY_BUCKETS counts are held.
    """

    __slots__ = ("_counts", "count")

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self.count = 0

    @property
    def buckets(self) -> int:
        """How many counts are held (at most MAX_LATENCY_BUCKETS)."""
        return len(self._counts)

    def add(self, latency_ms: int) -> None:
        key = _bucket(min(max(latency_ms, 0), LATENCY_CEILING_MS))
        self._counts[key] = self._counts.get(key, 0) + 1
        self.count += 1

    def quantile(self, share: float) -> float | None:
        """The nearest-rank quantile (share in 0..1), as `percentile`; None when empty."""
        if not self.count:
            return None
        rank = max(1, math.ceil(share * self.count))
        seen = 0
        for key in sorted(self._counts):
            seen += self._counts[key]
            if seen >= rank:
                return _bucket_value(key)
        raise AssertionError("the counts add up to self.count")  # pragma: no cover


def _bucket(latency_ms: int) -> int:
    if latency_ms < EXACT_LATENCY_MS:
        return latency_ms
    step = int(math.log(latency_ms / EXACT_LATENCY_MS, LATENCY_GROWTH))
    # Rounding in log() may not push a value past the last bucket.
    return EXACT_LATENCY_MS + min(step, LOG_BUCKETS - 1)


def _bucket_value(key: int) -> float:
    if key < EXACT_LATENCY_MS:
        return key
    return EXACT_LATENCY_MS * math.pow(LATENCY_GROWTH, key - EXACT_LATENCY_MS + 0.5)
