"""What a worker process does besides screening, every MAINTENANCE_INTERVAL_SECONDS:
remove done jobs older than FAITHSCREEN_JOB_RETENTION_DAYS (0 keeps them), and fold the
metric changes the triggers appended into their totals (repositories/metric_counts.py),
so they stay few even when nobody scrapes /metrics.

Every worker process does it; two doing it at once is harmless (a job is deleted once,
and on PostgreSQL one fold runs at a time). A failure is logged and tried again next time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.clock import utcnow
from app.repositories import metric_counts, retention

log = logging.getLogger(__name__)

MAINTENANCE_INTERVAL_SECONDS = 300.0


async def maintain(
    sessions: async_sessionmaker[AsyncSession],
    stop: asyncio.Event,
    *,
    job_retention_days: float,
    interval_seconds: float = MAINTENANCE_INTERVAL_SECONDS,
) -> None:
    """Until `stop` is set: a maintenance pass, then wait `interval_seconds`."""
    while not stop.is_set():
        try:
            await maintenance_pass(sessions, job_retention_days=job_retention_days)
        except SQLAlchemyError as error:
            log.warning("maintenance failed, will retry: %s", error)
        except Exception:
            # Not the database: logged whole, and tried again; maintenance never stops the
            # worker, nor its shutdown (Runtime.stop awaits this task).
            log.exception("maintenance failed, will retry")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_seconds)


async def maintenance_pass(
    sessions: async_sessionmaker[AsyncSession], *, job_retention_days: float
) -> int:
    """Remove done jobs past retention (a chunk per transaction) and fold the metric
    changes; the number of jobs removed."""
    removed = 0
    if job_retention_days > 0:
        before = utcnow() - timedelta(days=job_retention_days)
        while True:
            async with sessions() as session:
                deleted = await retention.delete_done_jobs(session, before=before)
                await session.commit()
            removed += deleted
            if deleted < retention.CHUNK:
                break
    async with sessions() as session:
        await metric_counts.fold(session)
        await session.commit()
    if removed:
        log.info("removed %d done jobs older than %s days", removed, job_retention_days)
    return removed
