"""What /metrics reports, counted from the database at scrape time: every API replica and
worker process writes to one database, so counting there is right across all of them.

Each query groups in SQL and returns one row per label set; only token usage (a JSON
column whose SQL differs between SQLite and PostgreSQL) is summed here, over a streamed
query that holds two small columns per review at a time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import ColumnElement, String, case, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from app.clock import utcnow
from app.models.job import Job
from app.models.queue_item import QueueItem
from app.models.review import Review
from app.models.screening import Screening
from app.repositories.jobs import oldest_queued_age_seconds
from app.repositories.provider_waits import Waiting, waiting
from app.vocabulary import QueueStatus, Role

# Per judge: the judge reviews alone, grouped by judge name instead of role.
JUDGE_REVIEWS = Review.role == Role.JUDGE

# Upper bounds (seconds) of the call-latency histogram: reasoning models take minutes.
LATENCY_BUCKETS_SECONDS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
TOKEN_KINDS = ("prompt", "completion", "reasoning")
# A screening not decided yet has no outcome; Prometheus reads "" as a missing label.
NO_OUTCOME = "none"
SUPPLIED_MODEL = "supplied"
UNKNOWN_MODEL = "unknown"


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
    return MetricsSnapshot(
        screenings=await screenings_by_outcome(session),
        llm_calls=await llm_calls(session),
        latency=await latency_histograms(session),
        tokens=await token_sums(session),
        jobs=await jobs_by_status(session),
        oldest_queued_job_age_seconds=await oldest_queued_age_seconds(session, now=now),
        queue_items=await queue_items_by_status(session, now=now),
        judge_llm_calls=await llm_calls(session, Review.judge_name, JUDGE_REVIEWS),
        judge_latency=await latency_histograms(session, Review.judge_name, JUDGE_REVIEWS),
        judge_tokens=await token_sums(session, Review.judge_name, JUDGE_REVIEWS),
        provider_waits=await waiting(session, now=now),
    )


async def screenings_by_outcome(session: AsyncSession) -> dict[tuple[str, str], int]:
    # As plain text: NO_OUTCOME is a label, not a word the outcome column may hold.
    outcome = func.coalesce(type_coerce(Screening.outcome, String()), NO_OUTCOME)
    statement = select(outcome, Screening.status, func.count()).group_by(outcome, Screening.status)
    rows = await session.execute(statement)
    return {(o, s): n for o, s, n in rows}


# What the per-role counts are grouped by (the role, or a judge's name), and over which
# reviews (all of them, or the judges').
By = InstrumentedAttribute[str]
Over = ColumnElement[bool] | None


async def llm_calls(
    session: AsyncSession, by: By = Review.role, over: Over = None
) -> dict[tuple[str, str, str], int]:
    """Calls by role, model and parse status; supplied replies count under model "supplied"."""
    model = case(
        (Review.supplied, SUPPLIED_MODEL), else_=func.coalesce(Review.model, UNKNOWN_MODEL)
    )
    statement = select(by, model, Review.parse_status, func.count()).group_by(
        by, model, Review.parse_status
    )
    if over is not None:
        statement = statement.where(over)
    rows = await session.execute(statement)
    return {(r, m, p): n for r, m, p, n in rows}


async def latency_histograms(
    session: AsyncSession, by: By = Review.role, over: Over = None
) -> list[CallLatencyBuckets]:
    """Bucket counts in SQL (one SUM(CASE) per bound), over calls with a latency recorded."""
    bounds = [
        func.sum(case((Review.latency_ms <= bound * 1000, 1), else_=0))
        for bound in LATENCY_BUCKETS_SECONDS
    ]
    statement = (
        select(by, func.count(), func.sum(Review.latency_ms), *bounds)
        .where(Review.latency_ms.is_not(None), *([] if over is None else [over]))
        .group_by(by)
        .order_by(by)
    )
    rows = (await session.execute(statement)).all()
    return [_histogram(role, count, total, counts) for role, count, total, *counts in rows]


def _histogram(
    role: str, count: int, total_ms: int | None, counts: list[int]
) -> CallLatencyBuckets:
    buckets = [(b, int(n or 0)) for b, n in zip(LATENCY_BUCKETS_SECONDS, counts, strict=True)]
    return CallLatencyBuckets(role, buckets, int(count), int(total_ms or 0) / 1000)


async def token_sums(
    session: AsyncSession, by: By = Review.role, over: Over = None
) -> dict[tuple[str, str], int]:
    totals: Counter[tuple[str, str]] = Counter()
    statement = select(by, Review.usage).execution_options(yield_per=1000)
    if over is not None:
        statement = statement.where(over)
    async for role, usage in await session.stream(statement):
        for kind in TOKEN_KINDS:
            count = (usage or {}).get(f"{kind}_tokens")
            # A count is an int; anything else a provider sent is left out, not guessed.
            if isinstance(count, int) and not isinstance(count, bool):
                totals[(role, kind)] += count
    return dict(totals)


async def jobs_by_status(session: AsyncSession) -> dict[str, int]:
    rows = await session.execute(select(Job.status, func.count()).group_by(Job.status))
    return {status: n for status, n in rows}


async def queue_items_by_status(session: AsyncSession, *, now: datetime) -> dict[str, int]:
    """Items by the status a reviewer sees: a claim that has lapsed counts as open."""
    lapsed = (QueueItem.status == QueueStatus.CLAIMED) & (QueueItem.claim_expires_at <= now)
    status = case((lapsed, QueueStatus.OPEN.value), else_=QueueItem.status)
    rows = await session.execute(select(status, func.count()).group_by(status))
    return {status: n for status, n in rows}
