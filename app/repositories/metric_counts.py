"""The totals /metrics reports, kept at write time (models/metric_count.py): `fold` moves the
change rows the triggers appended into the totals, `totals` reads both in one statement.

A scrape folds first, so it reads the totals' few rows plus the changes since the last
fold, however many reviews are stored. The worker folds too, so changes do not pile up
while nobody scrapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.metric_count import MetricCount, MetricCountChange

# Upper bounds (seconds) of the call-latency histogram. The triggers (migration
# 0018_retention) bucket by these in SQL: changing them needs a migration.
LATENCY_BUCKETS_SECONDS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)
KEYS = ("family", "label1", "label2", "label3", "label4", "bucket")
SUMS = ("n", "latency_ms", "prompt_tokens", "completion_tokens", "reasoning_tokens")
# Two scrapes (or a scrape and a worker) fold one at a time on PostgreSQL; the other just
# reads totals plus changes, which is as right.
FOLD_LOCK = 0x6661697468  # "faith"


@dataclass(frozen=True, slots=True)
class Counted:
    """One label set's totals."""

    family: str
    labels: tuple[str, str, str, str]
    bucket: int
    n: int
    latency_ms: int
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int


async def fold(session: AsyncSession) -> None:
    """Move every change row into the totals, summed in SQL (no row comes to Python). Does
    nothing on PostgreSQL while another session folds."""
    if session.get_bind().dialect.name == "postgresql":
        locked = await session.execute(select(func.pg_try_advisory_xact_lock(FOLD_LOCK)))
        if locked.scalar_one():
            # One statement: exactly the rows it deletes are the rows it adds up, whatever
            # commits meanwhile (ids from a sequence are not in commit order).
            moved = f"WITH moved AS ({_DELETE_ALL} RETURNING *) "
            await session.execute(text(moved + _ADD_UP.format(source="moved")))
        return
    # SQLite: the INSERT takes the write lock before it reads, so no change row can come
    # in between it and the DELETE of the same transaction.
    await session.execute(text(_ADD_UP.format(source="metric_count_changes")))
    await session.execute(text(_DELETE_ALL))


_KEY_LIST = ", ".join(KEYS)
_DELETE_ALL = "DELETE FROM metric_count_changes"
_ADD_UP = (
    f"INSERT INTO metric_counts ({_KEY_LIST}, {', '.join(SUMS)}) "
    f"SELECT {_KEY_LIST}, {', '.join(f'SUM({name})' for name in SUMS)} FROM {{source}} "
    # In key order: totals rows are locked in one order by every fold.
    f"GROUP BY {_KEY_LIST} ORDER BY {_KEY_LIST} "
    f"ON CONFLICT ({_KEY_LIST}) DO UPDATE SET "
    + ", ".join(f"{name} = metric_counts.{name} + excluded.{name}" for name in SUMS)
)


async def totals(session: AsyncSession, families: Sequence[str]) -> list[Counted]:
    """The totals of these families, changes not folded yet included (one statement: one
    snapshot, so a fold committing meanwhile is seen wholly or not at all)."""
    both = union_all(
        *[
            select(*[model.__table__.c[name] for name in (*KEYS, *SUMS)]).where(
                model.__table__.c.family.in_(families)
            )
            for model in (MetricCount, MetricCountChange)
        ]
    ).subquery()
    statement = select(
        *[both.c[name] for name in KEYS], *[func.sum(both.c[name]) for name in SUMS]
    ).group_by(*[both.c[name] for name in KEYS])
    rows = (await session.execute(statement)).all()
    return [
        Counted(row[0], (row[1], row[2], row[3], row[4]), int(row[5]), *map(int, row[6:]))
        for row in rows
    ]
