"""The totals /metrics reports, kept at write time (models/metric_count.py): `fold` moves the
change rows the triggers appended into the totals, `totals` reads both in one statement.

A scrape folds first, so it reads the totals' few rows plus the changes since the last
fold, however many reviews are stored. The worker folds too, so changes do not pile up
while nobody scrapes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Table, delete, func, select, union_all
from sqlalchemy.dialects import postgresql, sqlite
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

Key = tuple[str, str, str, str, str, int]


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


async def fold(session: AsyncSession) -> int:
    """Move every change row into the totals; the number of change rows moved (0 when
    another session is folding on PostgreSQL)."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        locked = await session.execute(select(func.pg_try_advisory_xact_lock(FOLD_LOCK)))
        if not locked.scalar_one():
            return 0
    table = MetricCountChange.__table__
    columns = [table.c[name] for name in (*KEYS, *SUMS)]
    moved = (await session.execute(delete(MetricCountChange).returning(*columns))).all()
    sums: dict[Key, list[int]] = defaultdict(lambda: [0] * len(SUMS))
    for row in moved:
        total = sums[tuple(row[: len(KEYS)])]
        for i, value in enumerate(row[len(KEYS) :]):
            total[i] += int(value)
    # In key order: no two folds can hold totals rows in opposite orders.
    rows = [dict(zip((*KEYS, *SUMS), (*key, *sums[key]), strict=True)) for key in sorted(sums)]
    if rows:
        await session.execute(_upsert(dialect), rows)
    return len(moved)


def _upsert(dialect: str) -> Any:
    table: Table = MetricCount.__table__  # type: ignore[assignment]
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert_of(table)
    added = {name: table.c[name] + statement.excluded[name] for name in SUMS}
    return statement.on_conflict_do_update(index_elements=list(KEYS), set_=added)


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
