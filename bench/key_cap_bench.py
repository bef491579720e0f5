"""The per-key cap check's cost at many outstanding screenings (PostgreSQL), before and
after counting stops at the cap, in the same run.

    python bench/key_cap_bench.py [--outstanding 100000] [--done 0] [--cap 100000]
                                  [--interactive-cap 1000] [--repeat 21] [--postgres-url URL]

On a fresh PostgreSQL database (the server of --postgres-url, default
FAITHSCREEN_TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test; dropped after),
migrated to head, it stores one key's N queued batch jobs (and their screenings), plus
--done finished jobs of another key (the job table holds a few days of them in service),
ANALYZEs, and times, alternating, in the service's own sessions:

- before: the query the intake ran (`SELECT priority_rank, count(*) ... GROUP BY`, every
  live job of the key counted), as app/repositories/jobs.py had it;
- after: what the intake runs now, app/intake/admission.py's `check_caps` for a request
  that queued one job: per cap, the span of the key's turns (two index lookups a
  priority), and only where that passes the cap a count stopped at the cap + 2 (a
  `LIMIT`ed subquery). With --cap below --outstanding the key is over its cap, so the
  bounded count runs (and the 429 is raised, and caught here).

Then VACUUMs the jobs table (which sets its visibility map, so index-only scans skip the
heap: a quiet queue's state) and times both again. Printed: the median and best of R in
milliseconds, and after / before.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import psycopg
from scratch_db import fresh_database, session_factory
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth.principal import Principal
from app.db.migrate import upgrade_to_head
from app.errors import AppError
from app.intake import admission
from app.models.api_key import AccessRole
from app.models.job import LIVE_ONLY, Job
from app.settings import Settings

KEY = "pipeline"
PRINCIPAL = Principal(KEY, AccessRole.SUBMITTER)
SCREENINGS = (
    "INSERT INTO screenings (id, pair_id, status, reasons, evidence, confirmations, "
    "created_at, updated_at, priority) SELECT 's' || n, 1, %s, '[]', '[]', 0, now(), now(), "
    "'batch' FROM generate_series(%s, %s) AS n"
)
JOBS = (
    "INSERT INTO jobs (screening_id, status, attempts, run_after, created_at, updated_at, "
    "submitter, priority_rank, turn) SELECT 's' || n, %s, 0, now(), now(), now(), %s, 1, n "
    "FROM generate_series(%s, %s) AS n"
)


def store(url: str, outstanding: int, done: int) -> None:
    with psycopg.connect(url) as connection:
        connection.execute(
            "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
            "VALUES (1, 'h', 'i', 'f', '', now())"
        )
        connection.execute(SCREENINGS, ("queued", 1, outstanding))
        connection.execute(JOBS, ("queued", KEY, 1, outstanding))
        if done:
            last = outstanding + done
            connection.execute(SCREENINGS, ("done", outstanding + 1, last))
            connection.execute(JOBS, ("done", "other", outstanding + 1, last))
    maintain(url, "ANALYZE")


def maintain(url: str, command: str) -> None:
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"{command} jobs")  # type: ignore[arg-type]


async def before(session: AsyncSession, cap: int, interactive_cap: int) -> None:
    statement = (
        select(Job.priority_rank, func.count())
        .where(LIVE_ONLY, Job.submitter == KEY)
        .group_by(Job.priority_rank)
    )
    (await session.execute(statement)).all()


async def after(session: AsyncSession, cap: int, interactive_cap: int) -> None:
    settings = Settings.model_construct(
        key_max_outstanding=cap, key_max_outstanding_interactive=interactive_cap
    )
    with contextlib.suppress(AppError):
        await admission.check_caps(session, PRINCIPAL, settings, 1)


Check = Callable[[AsyncSession, int, int], Awaitable[None]]


async def timed(
    sessions: async_sessionmaker[AsyncSession], args: argparse.Namespace
) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"before": [], "after": []}
    checks: dict[str, Check] = {"before": before, "after": after}
    async with sessions() as session:
        for _ in range(args.repeat):
            for name, check in checks.items():  # alternating: a load spike hits both
                start = time.perf_counter()
                await check(session, args.cap, args.interactive_cap)
                times[name].append((time.perf_counter() - start) * 1000)
                await session.rollback()
    return times


def report(label: str, times: dict[str, list[float]]) -> None:
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"  {label:<10} {name:<7} median {medians[name]:8.2f} ms  best {min(values):8.2f} ms")
    print(f"  {label:<10} after / before (medians): {medians['after'] / medians['before']:.3f}")


async def run(url: str, args: argparse.Namespace) -> None:
    upgrade_to_head(url)
    store(url.replace("postgresql+psycopg://", "postgresql://"), args.outstanding, args.done)
    async with session_factory(url) as sessions:
        report("analyzed", await timed(sessions, args))
        maintain(url.replace("postgresql+psycopg://", "postgresql://"), "VACUUM")
        report("vacuumed", await timed(sessions, args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outstanding", type=int, default=100_000)
    parser.add_argument("--done", type=int, default=0)
    parser.add_argument("--cap", type=int, default=100_000)
    parser.add_argument("--interactive-cap", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=21)
    default_url = os.environ.get(
        "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--postgres-url", default=default_url)
    args = parser.parse_args()
    print(
        f"{args.outstanding} outstanding jobs of one key, {args.done} done jobs, "
        f"caps {args.cap} / {args.interactive_cap} interactive, {args.repeat} runs each"
    )
    with (
        tempfile.TemporaryDirectory() as workdir,
        fresh_database("postgres", args.postgres_url, Path(workdir)) as url,
    ):
        asyncio.run(run(url, args))


if __name__ == "__main__":
    main()
