"""What this process counts itself, in memory: LLM attempts and their results (429s apart),
tokens, time spent waiting on a provider, calls in flight, attempt latency, claim latency
and screening latency by priority. Standard library only, so the LLM client and the worker
can record without importing anything above them.

Each process has its own (a Prometheus convention: counters start at 0 with the process
and are summed across processes by the query, `sum by (role) (rate(...[5m]))`). The API's
/metrics adds the serving process's (and its in-process worker's); a `faithscreen worker`
process serves its own on FAITHSCREEN_WORKER_METRICS_PORT. The totals over all history
(stored reviews, screenings by outcome) stay in the database (repositories/metrics.py).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["counter", "gauge", "histogram"]
Labels = tuple[str, ...]

# Seconds: an attempt or a screening (interactive ones in seconds, batches in hours).
LATENCY_BOUNDS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
SCREENING_BOUNDS = (1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0, 14400.0, 86400.0)
CLAIM_BOUNDS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


@dataclass(frozen=True, slots=True)
class Family:
    name: str
    kind: Kind
    labels: tuple[str, ...]
    help: str
    bounds: tuple[float, ...] = ()


ATTEMPTS = Family(
    "faithscreen_process_llm_attempts_total",
    "counter",
    ("role", "result"),
    "HTTP attempts this process made to a provider, by result: ok, http_429, http_error "
    "(another status), transport_error (no HTTP answer).",
)
TOKENS = Family(
    "faithscreen_process_llm_tokens_total",
    "counter",
    ("role", "kind"),
    "Tokens the provider reported for this process's attempts (prompt, completion, reasoning).",
)
WAITS = Family(
    "faithscreen_process_llm_wait_seconds_total",
    "counter",
    ("role", "cause"),
    "Seconds this process's calls waited before an attempt: pause (a 429 or Retry-After, "
    "a retry's backoff, the client's own rate spacing) or budget (the shared provider budget).",
)
IN_FLIGHT = Family(
    "faithscreen_process_llm_in_flight",
    "gauge",
    ("role",),
    "HTTP attempts to a provider this process has in flight now.",
)
ATTEMPT_SECONDS = Family(
    "faithscreen_process_llm_attempt_seconds",
    "histogram",
    ("role",),
    "Seconds one HTTP attempt to a provider took, by role.",
    LATENCY_BOUNDS,
)
CLAIM_SECONDS = Family(
    "faithscreen_process_claim_seconds",
    "histogram",
    (),
    "Seconds one claim of due jobs took (a transaction; idle polls included).",
    CLAIM_BOUNDS,
)
SCREENING_SECONDS = Family(
    "faithscreen_process_screening_seconds", "histogram", ("priority",),
    "Seconds from a screening's submission to its outcome, for screenings this process "
    "finished, by priority (interactive, batch).", SCREENING_BOUNDS,
)  # fmt: skip
LEAN_CHECKS = Family(
    "faithscreen_process_lean_checks_total",
    "counter",
    ("status",),
    "Lean checks this process made and stored, by status: ok, error, timeout, unavailable "
    "(a screening run again reads its stored check and is not counted twice).",
)
FAMILIES = (
    ATTEMPTS, TOKENS, WAITS, IN_FLIGHT, ATTEMPT_SECONDS, CLAIM_SECONDS, SCREENING_SECONDS,
    LEAN_CHECKS,
)  # fmt: skip


@dataclass(slots=True)
class Histogram:
    """Counts per bound (not cumulative: the exposition adds them up), a sum and a count."""

    counts: list[int]
    total: float = 0.0
    count: int = 0


@dataclass(slots=True)
class Registry:
    values: dict[str, dict[Labels, float]] = field(default_factory=dict)
    histograms: dict[str, dict[Labels, Histogram]] = field(default_factory=dict)

    def add(self, family: Family, labels: Labels, amount: float = 1.0) -> None:
        """A counter's increase, or a gauge's change (negative to go down)."""
        series = self.values.setdefault(family.name, {})
        series[labels] = series.get(labels, 0.0) + amount

    def observe(self, family: Family, labels: Labels, value: float) -> None:
        series = self.histograms.setdefault(family.name, {})
        histogram = series.get(labels)
        if histogram is None:
            histogram = series[labels] = Histogram([0] * len(family.bounds))
        index = bisect.bisect_left(family.bounds, value)
        if index < len(family.bounds):
            histogram.counts[index] += 1
        histogram.total += value
        histogram.count += 1

    def series(self, family: Family) -> Iterator[tuple[Labels, float]]:
        yield from sorted(self.values.get(family.name, {}).items())

    def histogram_series(self, family: Family) -> Iterator[tuple[Labels, Histogram]]:
        yield from sorted(self.histograms.get(family.name, {}).items())


# The process's own: one event loop writes it, a scrape reads it (no lock needed).
REGISTRY = Registry()


def attempt_result(status: int | None) -> str:
    """An attempt's `result` label from its HTTP status (None: no HTTP answer)."""
    if status is None:
        return "transport_error"
    if status == 429:
        return "http_429"
    return "ok" if 200 <= status < 300 else "http_error"


def record_attempt(
    role: str, status: int | None, usage: dict[str, object] | None, seconds: float
) -> None:
    """One HTTP attempt's result, latency and the tokens its reply reported (ints only)."""
    REGISTRY.add(ATTEMPTS, (role, attempt_result(status)))
    REGISTRY.observe(ATTEMPT_SECONDS, (role,), seconds)
    for kind in ("prompt", "completion", "reasoning"):
        count = (usage or {}).get(f"{kind}_tokens")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            REGISTRY.add(TOKENS, (role, kind), count)
