"""The summary report read from a database session (the API and the CLI both use this)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.types import utcnow
from app.reports.summary import ReviewTally, Summary
from app.repositories import reports
from app.repositories.reports import ReportFilters


async def summary_report(
    session: AsyncSession, filters: ReportFilters, *, now: datetime | None = None
) -> Summary:
    """Screenings are read first; reviews are then streamed into the tally one by one; the
    backlog (as of `now`), tags and days are counted by the database."""
    screenings = await reports.screening_rows(session, filters)
    tally = ReviewTally()
    async for review in reports.review_rows(session, filters):
        tally.add(review)
    counted = await reports.aggregates(session, filters, now or utcnow())
    return tally.summary(screenings, counted)
