"""The summary report read from a database session (the API and the CLI both use this)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.reports.reviewers import people_measures
from app.reports.summary import Aggregates, ReviewTally, Summary
from app.repositories import reports, review_measures
from app.repositories.reports import ReportFilters


async def summary_report(
    session: AsyncSession, filters: ReportFilters, *, now: datetime | None = None
) -> Summary:
    """Screenings are read first; reviews are then streamed into the tally one by one; the
    backlog (as of `now`), tags and days are counted by the database; people's decisions
    on the screenings' queue items are read whole (reports.reviewers measures them)."""
    screenings = await reports.screening_rows(session, filters)
    tally = ReviewTally()
    async for review in reports.review_rows(session, filters):
        tally.add(review)
    decided = await review_measures.decided_screenings(session, filters)
    facts = await review_measures.report_facts(session, filters)
    counted = Aggregates(
        backlog=await reports.backlog(session, filters, now or utcnow()),
        tags=await reports.tag_counts(session, filters),  # a row per tag shown
        days=await reports.day_counts(session, filters),  # a row per day
        people=people_measures(decided, facts),
    )
    return tally.summary(screenings, counted)
