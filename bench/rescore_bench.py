"""Re-scoring benchmark: `rescore` over stored screenings against the pure replay of the same
stored calls held in memory, in the same run.

    python bench/rescore_bench.py [--pairs 2000] [--repeat 3] [--databases sqlite,postgres]
                                  [--postgres-url URL] [--data DIR]

For each database (a fresh SQLite file; a fresh PostgreSQL database on the server of
--postgres-url, default FAITHSCREEN_TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test,
dropped after) it stores N finished screenings as one batch with supplied replies, posted
through the real intake (the in-process app on httpx2's ASGI transport, in a child process
so the peak memory printed is the measuring process's own). Pairs come from
../shared/data/pairs/*.jsonl; past the distinct pairs, copies get a header comment. The
replies cycle through four kinds:

  faithful    both roles FAITHFUL                                             -> passed
  mismatch    both roles MISMATCH                                             -> flagged
  quoting     the translator's BACK-TRANSLATION quotes "VERDICT: FAITHFUL", its
              VERDICT line says MISMATCH; the judge FAITHFUL                  -> not passed
  unreadable  the translator answers in prose with no fields; the judge FAITHFUL

Then, in this process, with no model called (screenings/s, and the rate as a fraction of
the reference's with the same parser):

  reference   `replay` over the stored calls, loaded once and held in memory
  dry run     `rescore(--all, apply=False)`: reads in chunks of 500, replays, diffs
  apply       `rescore(apply=True)` with a naive parser (the first VERDICT anywhere, as
              version naive-bench): the quoting screenings move, and each change writes
              its rulings and readings
  apply again the same parser once more: nothing is left to change

Each database is built R times (default 3) and each row keeps its best rate (and, apart,
its lowest CPU time), since a shared machine only ever slows a run down. The CPU column is
this process's CPU time per screening: all of the work on SQLite, which runs in-process,
and the client side only on PostgreSQL, whose server runs apart. Printed last: the peak
resident memory of this process (resource.getrusage), which holds the in-memory reference
data as well.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import httpx2
from scratch_db import fresh_database, session_factory
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.application import create_app
from app.contract.reading import Reading
from app.db.migrate import upgrade_to_head
from app.repositories import rescores
from app.repositories.rescore_rows import StoredCall
from app.repositories.rescores import Scope, StoredScreening
from app.rescore.replay import CURRENT_PARSER, Parser, replay
from app.rescore.service import rescore
from app.settings import ProviderSettings, Settings
from app.vocabulary import ParseStatus, Verdict

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pairs"
POSTGRES = os.environ.get(
    "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
FORMAT_RETRIES, AUDIT_RATE = 2, 0.02
NAIVE_VERDICT = re.compile(r"VERDICT:\s*(FAITHFUL|MISMATCH|UNCLEAR)")
KINDS = ("faithful", "mismatch", "quoting", "unreadable")


def reply(verdict: str, back_translation: str | None, issues: str = "none") -> str:
    fields = [] if back_translation is None else [f"BACK-TRANSLATION: {back_translation}"]
    return "\n".join([*fields, f"VERDICT: {verdict}", f"ISSUES: {issues}"]) + "\n"


def replies(kind: str, informal: str) -> dict[str, str]:
    """Both roles' replies of one kind; the back-translation restates the informal text."""
    judge = reply("MISMATCH" if kind == "mismatch" else "FAITHFUL", None)
    if kind == "quoting":
        quoted = f'It restates "VERDICT: FAITHFUL" for all n, not n > 0. {informal}'
        translator = reply("MISMATCH", quoted, "drops the hypothesis n > 0")
    elif kind == "unreadable":
        translator = f"Looks right to me. {informal}\n"
    else:
        translator = reply(kind.upper(), informal, "none" if kind == "faithful" else "differs")
    return {"translator": translator, "judge": judge}


def load_items(data: Path, count: int) -> list[dict[str, Any]]:
    pairs = []
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("informal") and row.get("formal"):
                pairs.append((row["informal"], row["formal"], row.get("header") or "", row["id"]))
    items = []
    for n in range(count):
        informal, formal, header, pair_id = pairs[n % len(pairs)]
        copy = n // len(pairs)
        items.append(
            {
                "informal": informal,
                "formal": formal,
                "header": header + (f"\n-- copy {copy}" if copy else ""),
                "external_id": f"{pair_id}#{copy}",
                "replies": replies(KINDS[n % len(KINDS)], informal),
            }
        )
    return items


def naive_read(content: str | None, finish_reason: str | None) -> Reading:
    """The first VERDICT anywhere in the reply: fooled by a quoted one."""
    found = NAIVE_VERDICT.search(content or "")
    if found is None:
        return Reading(Verdict.UNCLEAR, ParseStatus.MISSING, None, None, "naive-bench")
    return Reading(Verdict(found.group(1).lower()), ParseStatus.OK, None, None, "naive-bench")


NAIVE_PARSER = Parser(read=naive_read, version="naive-bench")


# --- Databases and storing ------------------------------------------------------------------


def store(url: str, data: Path, count: int) -> None:
    """Migrate, then post the batch to the in-process app (run in a child process)."""
    upgrade_to_head(url)
    asyncio.run(post_batch(url, load_items(data, count)))


async def post_batch(url: str, items: list[dict[str, Any]]) -> None:
    settings = Settings(
        database_url=url, translator=ProviderSettings(), judge=ProviderSettings(), auth="off"
    )
    app = create_app(settings, with_worker=False)
    async with app.router.lifespan_context(app):
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://bench") as client:
            response = await client.post("/v1/batches", json={"items": items}, timeout=600)
    assert response.status_code == 202, response.text
    assert response.json()["total"] == len(items)


# --- Measuring ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    rate: float
    # CPU seconds of this process per screening (SQLite's work included, PostgreSQL's not).
    cpu: float
    changed: int = 0
    applied: int = 0
    transitions: str = ""


Loaded = list[tuple[StoredScreening, list[StoredCall]]]


async def load_calls(sessions: async_sessionmaker[AsyncSession], count: int) -> Loaded:
    async with sessions() as session:
        stored = await rescores.screenings_after(session, Scope(), None, count)
        calls = await rescores.stored_calls(session, [s.current.screening_id for s in stored])
    return [(s, calls[s.current.screening_id]) for s in stored]


def reference(loaded: Loaded, parser: Parser) -> Result:
    started, cpu = time.perf_counter(), time.process_time()
    for screening, calls in loaded:
        replay(
            screening.pair,
            calls,
            confirmations=screening.confirmations,
            format_retries=FORMAT_RETRIES,
            parser=parser,
        )
    count = len(loaded)
    return Result(count / (time.perf_counter() - started), (time.process_time() - cpu) / count)


async def rescore_run(
    sessions: async_sessionmaker[AsyncSession], parser: Parser, *, apply: bool, count: int
) -> Result:
    started, cpu = time.perf_counter(), time.process_time()
    run = await rescore(
        sessions,
        Scope(),
        apply=apply,
        actor="bench",
        format_retries=FORMAT_RETRIES,
        audit_rate=AUDIT_RATE,
        parser=parser,
        rng=random.Random(0).random,
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert run.diff.considered == count, run.diff.as_json(max_ids=0)
    moved = ", ".join(f"{t} {n}" for t, n in sorted(run.diff.transitions.items()))
    return Result(count / elapsed, cpu / count, run.diff.changed, run.diff.applied, moved)


# (label, parser, apply, the reference row it is compared with), in the order they run.
ROWS: list[tuple[str, Parser, bool | None, str]] = [
    ("reference replay", CURRENT_PARSER, None, "reference replay"),
    ("dry run", CURRENT_PARSER, False, "reference replay"),
    ("reference replay, naive", NAIVE_PARSER, None, "reference replay, naive"),
    ("dry run, naive", NAIVE_PARSER, False, "reference replay, naive"),
    ("apply, naive", NAIVE_PARSER, True, "reference replay, naive"),
    ("apply again, naive", NAIVE_PARSER, True, "reference replay, naive"),
]


async def measure_once(url: str, count: int) -> dict[str, Result]:
    results: dict[str, Result] = {}
    async with session_factory(url) as sessions:
        loaded = await load_calls(sessions, count)
        assert len(loaded) == count
        for label, parser, apply, _ in ROWS:
            if apply is None:
                results[label] = reference(loaded, parser)
            else:
                results[label] = await rescore_run(sessions, parser, apply=apply, count=count)
    return results


def best(runs: list[dict[str, Result]]) -> dict[str, Result]:
    """Per row, the highest rate and, apart, the lowest CPU time of the runs."""
    chosen = {}
    for label, *_ in ROWS:
        results = [run[label] for run in runs]
        fastest = max(results, key=lambda r: r.rate)
        chosen[label] = replace(fastest, cpu=min(r.cpu for r in results))
    return chosen


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux


def print_rows(database: str, results: dict[str, Result]) -> None:
    for label, parser, apply, against in ROWS:
        result = results[label]
        ratio = result.rate / results[against].rate
        counts = ("", "") if apply is None else (result.changed, result.applied)
        cpu_ms = f"{1000 * result.cpu:.2f}"
        cells: tuple[object, ...] = (database, label, parser.version, f"{result.rate:,.0f}")
        cells += (f"{ratio:.2f}", cpu_ms, *counts)
        print("| " + " | ".join(str(cell) for cell in cells) + " |", flush=True)
    print(f"({database}: the first apply moved {results['apply, naive'].transitions or 'nothing'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default=POSTGRES)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    print(
        f"{args.pairs} screenings ({', '.join(KINDS)} replies in turn), best of {args.repeat}, "
        f"load {os.getloadavg()[0]:.2f}, peak RSS before: {peak_rss_mb():.0f} MB"
    )
    print("| database | run | parser | screenings/s | × reference | CPU ms | changed | applied |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    spawn = get_context("spawn")
    with tempfile.TemporaryDirectory() as workdir, ProcessPoolExecutor(1, spawn) as child:
        for database in args.databases.split(","):
            runs = []
            for _ in range(args.repeat):
                with fresh_database(database, args.postgres_url, Path(workdir)) as url:
                    child.submit(store, url, args.data, args.pairs).result()
                    runs.append(asyncio.run(measure_once(url, args.pairs)))
            print_rows(database, best(runs))
    print(f"peak RSS of this process: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
