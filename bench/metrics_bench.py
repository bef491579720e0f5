"""/metrics scrape time at (almost) no stored reviews against many, in the same run.

    python bench/metrics_bench.py [--reviews 1000000] [--repeat 7] [--databases sqlite,postgres]
                                  [--postgres-url URL]

For each database (a fresh SQLite file; a fresh PostgreSQL database on the server of
--postgres-url, default FAITHSCREEN_TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test,
dropped after) it migrates to head, submits one screening with supplied replies through
the in-process app, and times GET /metrics (best of R). Then it stores N provider-style
reviews (three models, four parse statuses, latencies across the buckets, token usage)
through the repository's bulk insert, so the write-time triggers run as in service; the
first scrape after folds their change rows (timed apart: the workers fold every 5
minutes, so a scrape meets a few minutes' changes, not N), and the scrape is timed again.

As a reference in the same run, the queries /metrics ran before (GROUP BYs over every
screening and review, and every review's token usage streamed through Python) are timed at
both sizes. Printed: milliseconds and each ratio (many / none). Goal: the scrape's ratio
within 2.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx2
from scratch_db import fresh_database, session_factory
from sqlalchemy import String, case, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.application import create_app
from app.db.migrate import upgrade_to_head
from app.models import Review, Screening
from app.repositories import reviews
from app.repositories.reviews import ReviewRecord
from app.settings import ProviderSettings, Settings

CHUNK = 5000
STATUSES = ("ok", "ok", "ok", "missing", "invalid", "truncated")
MODELS = ("model-a", "model-b", "model-c")
LATENCIES_MS = (120, 400, 900, 2000, 7000, 45_000, 200_000)
BOUNDS_MS = (250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000, 600000)


def settings(url: str) -> Settings:
    return Settings(
        database_url=url, translator=ProviderSettings(), judge=ProviderSettings(), auth="off"
    )


def record(screening_id: str, n: int) -> ReviewRecord:
    role = "translator" if n % 2 else "judge"
    return ReviewRecord(
        screening_id=screening_id,
        role=role,
        attempt=n // 2 + 2,  # the supplied replies took attempt 1
        purpose="review",
        verdict="faithful",
        parse_status=STATUSES[n % len(STATUSES)],
        parser_version="bench",
        model=MODELS[n % len(MODELS)],
        usage={"prompt_tokens": 900 + n % 200, "completion_tokens": 40, "reasoning_tokens": 7},
        latency_ms=LATENCIES_MS[n % len(LATENCIES_MS)],
    )


async def store(sessions: async_sessionmaker[AsyncSession], screening_id: str, count: int) -> None:
    for start in range(0, count, CHUNK):
        batch = [record(screening_id, n) for n in range(start, min(count, start + CHUNK))]
        async with sessions() as session:
            await reviews.add_many(session, batch)
            await session.commit()


async def old_queries(session: AsyncSession) -> None:
    """What /metrics ran per scrape before the totals were kept at write time."""
    outcome = func.coalesce(type_coerce(Screening.outcome, String()), "none")
    await session.execute(
        select(outcome, Screening.status, func.count()).group_by(outcome, Screening.status)
    )
    model = case((Review.supplied, "supplied"), else_=func.coalesce(Review.model, "unknown"))
    for by in (Review.role, Review.judge_name):
        await session.execute(
            select(by, model, Review.parse_status, func.count()).group_by(
                by, model, Review.parse_status
            )
        )
        bounds = [func.sum(case((Review.latency_ms <= b, 1), else_=0)) for b in BOUNDS_MS]
        await session.execute(
            select(by, func.count(), func.sum(Review.latency_ms), *bounds)
            .where(Review.latency_ms.is_not(None))
            .group_by(by)
        )
        totals: Counter[tuple[str, str]] = Counter()
        statement = select(by, Review.usage).execution_options(yield_per=1000)
        async for name, usage in await session.stream(statement):
            for kind in ("prompt", "completion", "reasoning"):
                count = (usage or {}).get(f"{kind}_tokens")
                if isinstance(count, int):
                    totals[(name, kind)] += count


async def best(repeat: int, step: object) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await step()  # type: ignore[operator]
        times.append(time.perf_counter() - started)
    return min(times) * 1000


async def measure(url: str, count: int, repeat: int) -> dict[str, float]:
    app = create_app(settings(url), with_worker=False)
    found: dict[str, float] = {}
    async with app.router.lifespan_context(app), session_factory(url) as sessions:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://bench") as client:
            item = {
                "informal": "For every natural number n, n + 0 = n.",
                "formal": "theorem t (n : ℕ) : n + 0 = n := by sorry",
                "replies": {"translator": "VERDICT: FAITHFUL", "judge": "VERDICT: FAITHFUL"},
            }
            answer = await client.post("/v1/screenings", json=item)
            screening_id = answer.json()["id"]

            async def scrape() -> None:
                response = await client.get("/metrics")
                assert response.status_code == 200, response.text

            async def reference() -> None:
                async with sessions() as session:
                    await old_queries(session)

            await scrape()  # warm: the first request of a process pays its imports
            await reference()
            found["scrape_none"] = await best(repeat, scrape)
            found["reference_none"] = await best(repeat, reference)
            started = time.perf_counter()
            await store(sessions, screening_id, count)
            found["store_s"] = time.perf_counter() - started
            found["first_scrape_folding"] = await best(1, scrape)
            found["scrape_many"] = await best(repeat, scrape)
            found["reference_many"] = await best(max(1, repeat // 3), reference)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reviews", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--databases", default="sqlite,postgres")
    default_pg = os.environ.get(
        "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--postgres-url", default=default_pg)
    args = parser.parse_args()
    print(f"{args.reviews:,} reviews, best of {args.repeat}; load {os.getloadavg()[0]:.1f}")
    print(
        "| database | scrape ms (none / many) | × | old queries ms (none / many) | × "
        "| first scrape (folds all) ms | store s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as workdir:
        for kind in args.databases.split(","):
            with fresh_database(kind, args.postgres_url, Path(workdir)) as url:
                upgrade_to_head(url)
                m = asyncio.run(measure(url, args.reviews, args.repeat))
            print(
                f"| {kind} | {m['scrape_none']:.1f} / {m['scrape_many']:.1f} "
                f"| {m['scrape_many'] / m['scrape_none']:.2f} "
                f"| {m['reference_none']:.1f} / {m['reference_many']:.1f} "
                f"| {m['reference_many'] / m['reference_none']:.0f} "
                f"| {m['first_scrape_folding']:.0f} | {m['store_s']:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
