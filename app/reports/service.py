"""The summary report read from a database session (the API and the CLI both use this)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.reports.summary import Summary, summarize
from app.repositories import reports
from app.repositories.reports import ReportFilters


async def summary_report(session: AsyncSession, filters: ReportFilters) -> Summary:
    screenings = await reports.screening_rows(session, filters)
    return summarize(screenings, await reports.review_rows(session, filters))
