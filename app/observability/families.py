"""The metric families /metrics serves, built from a stored-data snapshot (no I/O here)."""

from __future__ import annotations

import math

from app.observability.exposition import MetricFamily, Sample
from app.observability.labels import folded
from app.repositories.metrics import CallLatencyBuckets, MetricsSnapshot


def families(snapshot: MetricsSnapshot) -> list[MetricFamily]:
    return [
        _screenings(snapshot),
        _llm_calls(snapshot),
        _latency(snapshot.latency),
        _tokens(snapshot),
        _jobs(snapshot),
        _oldest_job(snapshot),
        _queue_items(snapshot),
        *judge_families(snapshot),
        *_provider_waits(snapshot),
    ]


def judge_families(snapshot: MetricsSnapshot) -> list[MetricFamily]:
    """Calls, latency and tokens per judge (a panel's, or `judge`): the judge reviews alone."""
    calls = [
        Sample({"judge": judge, "model": model, "parse_status": status}, n)
        for (judge, model, status), n in sorted(folded(snapshot.judge_llm_calls, 1).items())
    ]
    latency = [s for h in snapshot.judge_latency for s in _histogram_samples(h, "judge")]
    tokens = [
        Sample({"judge": judge, "kind": kind}, n)
        for (judge, kind), n in sorted(snapshot.judge_tokens.items())
    ]
    return [
        MetricFamily(
            "faithscreen_judge_llm_calls", "gauge",
            "Stored judge reviews by judge, model and parse status.", calls,
        ),
        MetricFamily(
            "faithscreen_judge_llm_call_latency_seconds", "histogram",
            "Judge call latency in seconds, by judge (calls with a recorded latency).", latency,
        ),
        MetricFamily(
            "faithscreen_judge_llm_tokens", "gauge",
            "Tokens the providers reported for judge calls, by judge and kind.", tokens,
        ),
    ]  # fmt: skip


def _screenings(snapshot: MetricsSnapshot) -> MetricFamily:
    samples = [
        Sample({"outcome": outcome, "status": status}, n)
        for (outcome, status), n in sorted(snapshot.screenings.items())
    ]
    help_ = 'Screenings by outcome ("none" until decided) and status.'
    return MetricFamily("faithscreen_screenings", "gauge", help_, samples)


def _llm_calls(snapshot: MetricsSnapshot) -> MetricFamily:
    samples = [
        Sample({"role": role, "model": model, "parse_status": status}, n)
        # The model is what the provider reported: bounded (observability/labels.py).
        for (role, model, status), n in sorted(folded(snapshot.llm_calls, 1).items())
    ]
    help_ = (
        "Stored reviews (LLM calls) by role, model and parse status; "
        'supplied replies count as model "supplied".'
    )
    return MetricFamily("faithscreen_llm_calls", "gauge", help_, samples)


def _latency(histograms: list[CallLatencyBuckets]) -> MetricFamily:
    samples = [sample for histogram in histograms for sample in _histogram_samples(histogram)]
    help_ = "LLM call latency in seconds, by role (calls with a recorded latency)."
    return MetricFamily("faithscreen_llm_call_latency_seconds", "histogram", help_, samples)


def _histogram_samples(histogram: CallLatencyBuckets, label: str = "role") -> list[Sample]:
    role = histogram.role
    buckets = [Sample({label: role, "le": _bound(b)}, n, "_bucket") for b, n in histogram.buckets]
    return [
        *buckets,
        Sample({label: role, "le": "+Inf"}, histogram.count, "_bucket"),
        Sample({label: role}, histogram.sum_seconds, "_sum"),
        Sample({label: role}, histogram.count, "_count"),
    ]


def _bound(seconds: float) -> str:
    return "+Inf" if math.isinf(seconds) else repr(float(seconds))


def _tokens(snapshot: MetricsSnapshot) -> MetricFamily:
    samples = [
        Sample({"role": role, "kind": kind}, n)
        for (role, kind), n in sorted(snapshot.tokens.items())
    ]
    help_ = "Tokens the providers reported, by role and kind (prompt, completion, reasoning)."
    return MetricFamily("faithscreen_llm_tokens", "gauge", help_, samples)


def _jobs(snapshot: MetricsSnapshot) -> MetricFamily:
    samples = [Sample({"status": status}, n) for status, n in sorted(snapshot.jobs.items())]
    return MetricFamily("faithscreen_jobs", "gauge", "Jobs by status (queue depth).", samples)


def _oldest_job(snapshot: MetricsSnapshot) -> MetricFamily:
    # 0 when nothing is due: an absent series would read as "no data" on a dashboard.
    age = snapshot.oldest_queued_job_age_seconds or 0.0
    help_ = "Seconds the longest-waiting due job has been due (0 when none is)."
    return MetricFamily(
        "faithscreen_oldest_queued_job_age_seconds", "gauge", help_, [Sample({}, age)]
    )


def _queue_items(snapshot: MetricsSnapshot) -> MetricFamily:
    samples = [Sample({"status": s}, n) for s, n in sorted(snapshot.queue_items.items())]
    help_ = "Review queue items by status (a lapsed claim counts as open)."
    return MetricFamily("faithscreen_review_queue_items", "gauge", help_, samples)


def _provider_waits(snapshot: MetricsSnapshot) -> list[MetricFamily]:
    # Both 0 when no provider asked to wait: an absent series reads as "no data".
    waits = snapshot.provider_waits
    return [
        MetricFamily(
            "faithscreen_provider_wait_jobs", "gauge",
            "Jobs queued for later because a provider asked to wait (429, Retry-After).",
            [Sample({}, waits.jobs)],
        ),
        MetricFamily(
            "faithscreen_provider_wait_seconds", "gauge",
            "Seconds until the last job a provider asked to wait for is due (0 when none).",
            [Sample({}, waits.longest_seconds)],
        ),
    ]  # fmt: skip
