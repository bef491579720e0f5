"""Rows for the summary report (app/reports/summary.py), read in one pass each.

Reviews are streamed in chunks of CHUNK rows and handed on one at a time, never gathered
into a list: a report over a large database holds one chunk of the columns it counts.
The queue backlog, outcomes by tag and screenings per day are counted by the database
(`aggregates`), over the same screenings as the rest of the report.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Date,
    TableValuedAlias,
    and_,
    case,
    cast,
    distinct,
    exists,
    false,
    func,
    select,
    true,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import QueryableAttribute, aliased

from app.models.queue_item import QueueItem
from app.models.rescore import ReadingRow
from app.models.review import Review
from app.models.screening import Screening
from app.repositories.blind_items import is_blind_screening
from app.repositories.report_rows import (
    TAGS_SHOWN,
    Backlog,
    DayCount,
    ReviewRow,
    ScreeningRow,
    TagCount,
    TagCounts,
    WaitingItem,
)
from app.vocabulary import OUTCOMES, QueueStatus, Role

CHUNK = 1000
CLAIMED, RESOLVED = QueueStatus.CLAIMED, QueueStatus.RESOLVED


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportFilters:
    """Screenings by batch and creation time (since inclusive, until exclusive); reviews by
    role, model and prompt version (a screening counts when one of its reviews matches)."""

    batch_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    role: Role | None = None
    model: str | None = None
    prompt_version: str | None = None
    # Unresolved queue items with one of these `audit` values are blind to the reader (a
    # reviewer: visibility.screening_blind_audits): their screenings are left out, or a
    # report narrowed to them would tell their outcome.
    blind_audits: tuple[bool, ...] = ()

    def screening_conditions(self) -> list[ColumnElement[bool]]:
        conditions: list[ColumnElement[bool]] = [Screening.outcome.is_not(None)]
        if self.blind_audits:
            conditions.append(~is_blind_screening(self.blind_audits))
        if self.batch_id is not None:
            conditions.append(Screening.batch_id == self.batch_id)
        if self.since is not None:
            conditions.append(Screening.created_at >= as_utc(self.since))
        if self.until is not None:
            conditions.append(Screening.created_at < as_utc(self.until))
        return conditions

    def described(self) -> dict[str, str]:
        """The filters that are set, label -> value, for a report's header."""
        moments = {"since": self.since, "until": self.until}
        chosen = {
            "batch": self.batch_id,
            **{k: as_utc(v).isoformat() for k, v in moments.items() if v is not None},
            "role": self.role,
            "model": self.model,
            "prompt version": self.prompt_version,
            "blind items": "left out" if self.blind_audits else None,
        }
        return {label: value for label, value in chosen.items() if value is not None}

    def review_conditions(self) -> list[ColumnElement[bool]]:
        chosen = {"role": self.role, "model": self.model, "prompt_version": self.prompt_version}
        return [getattr(Review, name) == value for name, value in chosen.items() if value]

    def reported_screenings(self) -> list[ColumnElement[bool]]:
        """The screenings a report covers: finished, in the batch and time range, and with
        a review matching the review filters when there are any."""
        conditions = self.screening_conditions()
        if review_conditions := self.review_conditions():
            matching = and_(Review.screening_id == Screening.id, *review_conditions)
            conditions.append(exists().where(matching))
        return conditions


def as_utc(moment: datetime) -> datetime:
    """A moment without a zone is taken as UTC, the zone every stored time is in."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


async def screening_rows(session: AsyncSession, filters: ReportFilters) -> list[ScreeningRow]:
    """Finished screenings matching `filters`, each with whether it was an audit sample."""
    statement = (
        select(
            Screening.id,
            Screening.outcome,
            Screening.reasons,
            Screening.final_decision,
            func.coalesce(QueueItem.audit, false()),
        )
        .outerjoin(QueueItem, QueueItem.screening_id == Screening.id)
        .where(*filters.reported_screenings())
    )
    rows = (await session.execute(statement)).all()
    return [ScreeningRow(r[0], r[1], list(r[2] or []), r[3], bool(r[4])) for r in rows]


async def review_rows(session: AsyncSession, filters: ReportFilters) -> AsyncIterator[ReviewRow]:
    """Reviews of finished screenings matching `filters`, streamed, each with its current
    reading: the latest re-reading an applied re-scoring run stored, else its own."""
    latest = (
        select(ReadingRow.review_id, func.max(ReadingRow.id).label("reading_id"))
        .group_by(ReadingRow.review_id)
        .subquery()
    )
    reread = aliased(ReadingRow)
    statement = (
        select(
            Review.screening_id,
            Review.role,
            Review.attempt,
            Review.purpose,
            Review.model,
            Review.prompt_version,
            func.coalesce(reread.verdict, Review.verdict),
            func.coalesce(reread.parse_status, Review.parse_status),
            Review.latency_ms,
            Review.usage,
            Review.http_status,
            Review.supplied,
            Review.judge_name,
        )
        .join(Screening, Screening.id == Review.screening_id)
        .outerjoin(latest, latest.c.review_id == Review.id)
        .outerjoin(reread, reread.id == latest.c.reading_id)
        .where(*filters.screening_conditions(), *filters.review_conditions())
        .execution_options(yield_per=CHUNK)
    )
    result = await session.stream(statement)
    try:
        async for row in result:
            yield _review_row(row)
    finally:
        # A consumer that stops early must not leave the cursor open.
        await result.close()


def _review_row(row: Any) -> ReviewRow:
    (screening_id, role, attempt, purpose, model, version, verdict, status, latency, usage,
     http_status, supplied, judge_name) = row  # fmt: skip
    return ReviewRow(
        screening_id,
        role,
        attempt,
        purpose,
        model,
        version,
        verdict,
        status,
        latency,
        usage=dict(usage or {}),
        http_status=http_status,
        supplied=bool(supplied),
        judge_name=judge_name or "",
    )


async def backlog(session: AsyncSession, filters: ReportFilters, now: datetime) -> Backlog:
    """Unresolved queue items of the reported screenings: open ones (a lapsed claim counts as
    open, as in the queue), claimed ones, and the oldest of them (by creation, then id)."""
    held = and_(QueueItem.status == CLAIMED, QueueItem.claim_expires_at > now)
    counts = (
        select(func.count(), func.coalesce(func.sum(case((held, 1), else_=0)), 0))
        .join(Screening, Screening.id == QueueItem.screening_id)
        .where(QueueItem.status != RESOLVED, *filters.reported_screenings())
    )
    waiting, claimed = (await session.execute(counts)).one()
    oldest = (
        select(QueueItem.id, QueueItem.screening_id, QueueItem.created_at)
        .join(Screening, Screening.id == QueueItem.screening_id)
        .where(QueueItem.status != RESOLVED, *filters.reported_screenings())
        .order_by(QueueItem.created_at, QueueItem.id)
        .limit(1)
    )
    first = (await session.execute(oldest)).first()
    item = WaitingItem(first[0], first[1], first[2]) if first else None
    return Backlog(open=waiting - claimed, claimed=claimed, oldest=item, as_of=now)


async def tag_counts(session: AsyncSession, filters: ReportFilters) -> TagCounts:
    """The TAGS_SHOWN tags with most reported screenings (ties by name), each by outcome, and
    how many distinct tags there are. A tag a screening gives twice counts once."""
    entries = _json_strings(Screening.tags, session.get_bind().dialect.name)
    tagged = (
        select(Screening.id, Screening.outcome, entries.c.value.label("tag"))
        .select_from(Screening)
        .join(entries, true())
        .where(*filters.reported_screenings())
        .distinct()
        .subquery()
    )
    total = await session.scalar(select(func.count(distinct(tagged.c.tag))))
    counted = _outcome_counts(tagged.c.outcome)
    statement = (
        select(tagged.c.tag, *counted)
        .group_by(tagged.c.tag)
        .order_by(func.count().desc(), tagged.c.tag)
        .limit(TAGS_SHOWN)
    )
    rows = (await session.execute(statement)).all()
    return TagCounts([TagCount(row[0], _outcomes(row[1:])) for row in rows], total or 0)


async def day_counts(session: AsyncSession, filters: ReportFilters) -> list[DayCount]:
    """Reported screenings per UTC day of creation, by outcome, oldest day first."""
    day = _utc_day(session.get_bind().dialect.name).label("day")
    statement = (
        select(day, *_outcome_counts(Screening.outcome))
        .where(*filters.reported_screenings())
        .group_by(day)
        .order_by(day)
    )
    rows = (await session.execute(statement)).all()
    return [DayCount(_as_date(row[0]), _outcomes(row[1:])) for row in rows]


def _outcome_counts(
    outcome: ColumnElement[Any] | QueryableAttribute[Any],
) -> list[ColumnElement[Any]]:
    return [func.sum(case((outcome == value, 1), else_=0)) for value in OUTCOMES]


def _outcomes(counts: Sequence[Any]) -> dict[str, int]:
    return {outcome: int(count or 0) for outcome, count in zip(OUTCOMES, counts, strict=True)}


def _json_strings(column: Any, dialect: str) -> TableValuedAlias:
    """The strings of a JSON list column, one row each (`value`), beside its row."""
    if dialect == "postgresql":
        # Named columns (AS anon(value)): PostgreSQL calls a scalar function's column after
        # its alias otherwise.
        return func.json_array_elements_text(column).table_valued("value").render_derived()
    return func.json_each(column).table_valued("value")


def _utc_day(dialect: str) -> ColumnElement[Any]:
    """The UTC calendar day a screening was created on (SQLite stores naive UTC text)."""
    if dialect == "postgresql":
        return cast(func.timezone("UTC", Screening.created_at), Date)
    return func.date(Screening.created_at)


def _as_date(value: date | str) -> date:
    return value if isinstance(value, date) else date.fromisoformat(value)
