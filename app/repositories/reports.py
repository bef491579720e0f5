"""Rows for the summary report (app/reports/summary.py), read in one pass each.

Reviews are streamed in chunks of CHUNK rows and handed on one at a time, never gathered
into a list: a report over a large database holds one chunk of the columns it counts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, false, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.queue_item import QueueItem
from app.models.rescore import ReadingRow
from app.models.review import Review
from app.models.screening import Screening
from app.reports.summary import ReviewRow, ScreeningRow

CHUNK = 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class ReportFilters:
    """Screenings by batch and creation time (since inclusive, until exclusive); reviews by
    role, model and prompt version (a screening counts when one of its reviews matches)."""

    batch_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    role: str | None = None
    model: str | None = None
    prompt_version: str | None = None

    def screening_conditions(self) -> list[ColumnElement[bool]]:
        conditions: list[ColumnElement[bool]] = [Screening.outcome.is_not(None)]
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
        }
        return {label: value for label, value in chosen.items() if value is not None}

    def review_conditions(self) -> list[ColumnElement[bool]]:
        chosen = {"role": self.role, "model": self.model, "prompt_version": self.prompt_version}
        return [getattr(Review, name) == value for name, value in chosen.items() if value]


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
        .where(*filters.screening_conditions())
    )
    if review_conditions := filters.review_conditions():
        matching = and_(Review.screening_id == Screening.id, *review_conditions)
        statement = statement.where(exists().where(matching))
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
    screening_id, role, attempt, purpose, model, version, verdict, status, latency, usage = row
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
    )
