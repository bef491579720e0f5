"""What retention removes, and what it never touches.

Done jobs are removed once they are older than FAITHSCREEN_JOB_RETENTION_DAYS (the worker
does it, app/worker/maintenance.py): a done job only says that its screening ran, which
the screening itself keeps. Prompts (`reviews.messages`, about 6 KB a call) are cleared by
`faithscreen db prune --before DATE`; their digest, the raw reply and body, every parsed
field and version stay, and the database refuses any other change to a review (migration
0018_retention). A re-score reads the raw replies, never a prompt, so it works as before.

Both work in short chunks, each its own transaction, so a large prune never holds locks
for long or competes with the workers for more than a chunk's time.
"""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import Table, Text, delete, func, null, select, update
from sqlalchemy import cast as sql_cast
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.job import Job
from app.models.review import Review
from app.vocabulary import JobStatus

CHUNK = 1000


async def delete_done_jobs(session: AsyncSession, *, before: datetime, limit: int = CHUNK) -> int:
    """Delete up to `limit` jobs done before `before` (by their last update); how many."""
    chosen = (
        select(Job.id)
        .where(Job.status == JobStatus.DONE, Job.updated_at < before)
        .order_by(Job.id)
        .limit(limit)
    )
    result = await session.execute(
        delete(Job).where(Job.id.in_(chosen.scalar_subquery())).returning(Job.id)
    )
    return len(result.all())


async def review_id_bounds(session: AsyncSession) -> tuple[int, int]:
    """The lowest and highest review id (0, 0 when there are none)."""
    low, high = (await session.execute(select(func.min(Review.id), func.max(Review.id)))).one()
    return int(low or 0), int(high or 0)


async def clear_prompts(session: AsyncSession, *, before: datetime, first: int, last: int) -> int:
    """Clear the prompt of every review with an id in [first, last] stored before `before`
    that still has one; how many. Walking ids (the primary key) keeps each chunk an index
    range, however many reviews there are. Core, not the ORM: the model refuses every
    update, and this is the one the database allows."""
    table = cast(Table, Review.__table__)
    statement = (
        update(table)
        .where(
            table.c.id.between(first, last),
            table.c.created_at < before,
            table.c.messages.is_not(None),
            # A review without a prompt (a supplied reply) holds JSON null: not counted.
            sql_cast(table.c.messages, Text) != "null",
        )
        .values(messages=null())
    )
    result = await session.execute(statement)
    return int(result.rowcount or 0)  # type: ignore[attr-defined]
