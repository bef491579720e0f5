"""What /metrics reports from the database. Every API replica and worker process writes to
one database, so totals counted there are right across all of them.

Nothing here reads history: the totals (screenings, reviews with their latency and
tokens, jobs, queue items by status) are kept at write time by triggers
(repositories/metric_counts.py), and the rest are indexed reads of live rows (due and
waiting jobs by `ix_jobs_status_run_after`, lapsed claims by the queue's status index).
A scrape costs the same at 0 and at millions of stored reviews.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.db.types import unescape_text
from app.models.queue_item import QueueItem
from app.models.screening import Screening
from app.repositories import metric_counts
from app.repositories.jobs import oldest_queued_age_seconds
from app.repositories.metric_counts import LATENCY_BUCKETS_SECONDS, Counted
from app.repositories.provider_waits import Waiting, waiting
from app.vocabulary import QueueStatus, Role

TOKEN_KINDS = ("prompt", "completion", "reasoning")
FAMILIES = ("reviews", "screenings", "jobs", "queue_items")


@dataclass(frozen=True, slots=True)
class CallLatencyBuckets:
    """One role's (or one judge's) call latencies as /metrics exposes them: cumulative
    buckets, a count and a sum. Not the report's LatencyHistogram, which keeps counts in
    memory for quantiles."""

    role: str
    # (upper bound in seconds, calls at or under it): cumulative, as Prometheus wants.
    buckets: list[tuple[float, int]]
    count: int
    sum_seconds: float


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    screenings: dict[tuple[str, str], int] = field(default_factory=dict)  # (outcome, status)
    llm_calls: dict[tuple[str, str, str], int] = field(default_factory=dict)  # role, model, ps
    latency: list[CallLatencyBuckets] = field(default_factory=list)
    tokens: dict[tuple[str, str], int] = field(default_factory=dict)  # (role, kind)
    jobs: dict[str, int] = field(default_factory=dict)
    oldest_queued_job_age_seconds: float | None = None
    queue_items: dict[str, int] = field(default_factory=dict)
    # The same three per judge (`judge` for the single judge), judge reviews only; a
    # histogram's `role` is then the judge's name.
    judge_llm_calls: dict[tuple[str, str, str], int] = field(default_factory=dict)
    judge_latency: list[CallLatencyBuckets] = field(default_factory=list)
    judge_tokens: dict[tuple[str, str], int] = field(default_factory=dict)
    # Jobs queued for later because a provider asked to wait (a 429, a Retry-After).
    provider_waits: Waiting = field(default_factory=Waiting)


async def snapshot(session: AsyncSession, *, now: datetime | None = None) -> MetricsSnapshot:
    now = now or utcnow()
    await metric_counts.fold(session)
    counted = await metric_counts.totals(session, FAMILIES)
    reviews = [c for c in counted if c.family == "reviews"]
    judges = [c for c in reviews if c.labels[0] == Role.JUDGE.value]
    return MetricsSnapshot(
        screenings=_by_status(counted, "screenings", 2),  # type: ignore[arg-type]
        llm_calls=_calls(reviews, 0),
        latency=_histograms(reviews, 0),
        tokens=_tokens(reviews, 0),
        jobs=_by_status(counted, "jobs", 1),  # type: ignore[arg-type]
        oldest_queued_job_age_seconds=await oldest_queued_age_seconds(session, now=now),
        queue_items=await _queue_items(session, counted, now),
        judge_llm_calls=_calls(judges, 1),
        judge_latency=_histograms(judges, 1),
        judge_tokens=_tokens(judges, 1),
        provider_waits=await waiting(session, now=now),
    )


def _by_status(counted: list[Counted], family: str, width: int) -> dict[object, int]:
    """A status family's non-zero counts, by its first `width` labels (a 1-tuple as is)."""
    found: dict[object, int] = {}
    for c in counted:
        if c.family == family and c.n:
            key = c.labels[:width]
            found[key if width > 1 else key[0]] = c.n
    return found


def _calls(reviews: list[Counted], by: int) -> dict[tuple[str, str, str], int]:
    """Calls by role (or judge), model and parse status; supplied replies count under model
    "supplied". A model the trigger stored escaped (app/db/types) is read back."""
    calls: dict[tuple[str, str, str], int] = defaultdict(int)
    for c in reviews:
        calls[(c.labels[by], unescape_text(c.labels[2]), c.labels[3])] += c.n
    return dict(calls)


def _histograms(reviews: list[Counted], by: int) -> list[CallLatencyBuckets]:
    """Per role (or judge), over calls with a latency recorded (bucket -1 has none)."""
    per_bucket: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    sums: dict[str, int] = defaultdict(int)
    for c in reviews:
        if c.bucket >= 0:
            per_bucket[c.labels[by]][c.bucket] += c.n
            sums[c.labels[by]] += c.latency_ms
    return [_histogram(name, per_bucket[name], sums[name]) for name in sorted(per_bucket)]


def _histogram(name: str, counts: dict[int, int], total_ms: int) -> CallLatencyBuckets:
    buckets = [
        (bound, sum(n for i, n in counts.items() if i <= index))
        for index, bound in enumerate(LATENCY_BUCKETS_SECONDS)
    ]
    return CallLatencyBuckets(name, buckets, sum(counts.values()), total_ms / 1000)


def _tokens(reviews: list[Counted], by: int) -> dict[tuple[str, str], int]:
    """Tokens by role (or judge) and kind; a kind appears once a provider reported some."""
    tokens: dict[tuple[str, str], int] = defaultdict(int)
    for c in reviews:
        for kind, n in zip(
            TOKEN_KINDS, (c.prompt_tokens, c.completion_tokens, c.reasoning_tokens), strict=True
        ):
            if n:
                tokens[(c.labels[by], kind)] += n
    return dict(tokens)


async def _queue_items(
    session: AsyncSession, counted: list[Counted], now: datetime
) -> dict[str, int]:
    """Items by the status a reviewer sees: a claim that has lapsed counts as open (read
    from the claimed items alone, by the queue's status index)."""
    items: dict[str, int] = _by_status(counted, "queue_items", 1)  # type: ignore[assignment]
    lapsed_claims = select(func.count()).where(
        QueueItem.status == QueueStatus.CLAIMED, QueueItem.claim_expires_at <= now
    )
    lapsed = int((await session.execute(lapsed_claims)).scalar_one())
    if lapsed:
        items[QueueStatus.OPEN.value] = items.get(QueueStatus.OPEN.value, 0) + lapsed
        items[QueueStatus.CLAIMED.value] -= lapsed
    return {status: n for status, n in items.items() if n}


async def submitted(session: AsyncSession, screening_id: str) -> tuple[datetime, str] | None:
    """When a screening was submitted and its priority (for the process's screening
    latency histogram); None if there is no such screening."""
    statement = select(Screening.created_at, Screening.priority).where(Screening.id == screening_id)
    row = (await session.execute(statement)).one_or_none()
    return None if row is None else (row[0], str(row[1]))
