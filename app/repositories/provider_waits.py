"""Jobs put back because a provider asked to wait (a 429, a Retry-After): the job and its
screening say so in words, and /metrics counts the jobs still waiting.

The words are the mark: a job waits for a provider while it is queued for later and its
`last_error` begins with WAIT_NOTE, as every note the worker writes here does (it is
what `ProviderBackoff.describe()` begins with; a test holds the two together).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models.job import Job
from app.models.screening import Screening
from app.repositories import jobs
from app.vocabulary import JobStatus, ScreeningStatus

WAIT_NOTE = "provider asked to wait"


@dataclass(frozen=True, slots=True)
class Waiting:
    """Jobs queued for later because a provider asked to wait, and the longest of those
    waits still to run (0 when none)."""

    jobs: int = 0
    longest_seconds: float = 0.0


async def defer(
    session: AsyncSession,
    job_id: int,
    owner: str,
    screening_id: str,
    *,
    run_after: datetime,
    note: str,
) -> bool:
    """Release the job until `run_after` (its claim given back, as `jobs.release`) and put
    `note` on it and on its screening, queued again; False if `owner` no longer holds it."""
    if not note.startswith(WAIT_NOTE):
        raise ValueError(f"a provider wait's note begins {WAIT_NOTE!r}: {note!r}")
    if not await jobs.release(session, job_id, owner, run_after=run_after):
        return False
    await session.execute(update(Job).where(Job.id == job_id).values(last_error=note))
    unfinished = and_(Screening.id == screening_id, Screening.status != ScreeningStatus.DONE)
    values = {"status": ScreeningStatus.QUEUED, "error": note}
    await session.execute(update(Screening).where(unfinished).values(values))
    return True


async def waiting(session: AsyncSession, *, now: datetime | None = None) -> Waiting:
    now = now or utcnow()
    statement = select(func.count(), func.max(Job.run_after)).where(
        Job.status == JobStatus.QUEUED,
        Job.run_after > now,
        Job.last_error.startswith(WAIT_NOTE, autoescape=True),
    )
    count, latest = (await session.execute(statement)).one()
    if not count or latest is None:
        return Waiting()
    # max() keeps the column type (UTCDateTime): an aware datetime on every backend.
    return Waiting(int(count), (latest - now).total_seconds())
