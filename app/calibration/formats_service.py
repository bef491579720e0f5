"""A format study's batches read back from a database session into their tallies, through
the calibration's own query (repositories.calibration) and its own reading of each row
(calibration.service.labelled_screening), with the two things the study adds: each
screening's pair, so formats compare on the same pairs, and each reply's text."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.calibration.formats import FormatTally, StudiedScreening
from app.calibration.service import labelled_screening
from app.models.review import Review
from app.models.screening import Screening
from app.repositories import calibration


async def format_tally(session: AsyncSession, batch_id: str, reply_format: str) -> FormatTally:
    """The tally of the batch screened under `reply_format`."""
    tally = FormatTally(reply_format, batch_id=batch_id)
    extra = (Screening.pair_id.label("study_pair_id"), Review.raw_response.label("study_reply"))
    async for rows in calibration.labelled_screenings(session, batch_id, *extra):
        replies = [row.study_reply for row in rows if row.role is not None]
        studied = StudiedScreening(str(rows[0].study_pair_id), labelled_screening(rows), replies)
        tally.add(studied)
    return tally
