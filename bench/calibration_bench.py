"""Calibration benchmark: a labelled batch's calibration against the summary report of the
same batch, in the same run, with the peak memory of each.

    python bench/calibration_bench.py [--screenings 10000] [--small 2500] [--repeat 5]
                                      [--databases sqlite,postgres] [--postgres-url URL]
                                      [--data DIR] [--profile]

For each database (a fresh SQLite file; a fresh PostgreSQL database on the server of
--postgres-url, default FAITHSCREEN_TEST_POSTGRES_URL or postgresql://postgres@127.0.0.1:5432/test,
dropped after) a child process stores two labelled batches -- --small items, then
--screenings items, the first --small of them the same pairs with the same labels -- so
that memory can be compared across sizes and the two batches compared with each other.
Each goes through the real intake (`submit_batch` on a JSONL body, as `faithscreen screen`
stores a pairs file). Three items in four carry supplied replies (two reviews each, decided
at intake); the fourth is queued and then screened as the worker would store it: claimed,
two provider-style reviews (model, prompt, usage, latency, raw body) and its outcome
written through the worker's group-commit recorder, evidence checks and policy included.

Pairs come from ../shared/data/labelled/dev.jsonl (their own labels) and
../shared/data/pairs/*.jsonl (a fixed 60/40 faithful/mismatch label per pair); past the
distinct pairs, copies get a header comment. Tags: the source, the upstream split or topic
where the row has one, and a split of our own. The replies, drawn with a fixed seed and
leaning towards the label, make every outcome occur: both FAITHFUL, both MISMATCH, the
judge alone MISMATCH, the judge UNCLEAR, and a translator reply in prose with no fields.

Then, in this process, for each batch size (time: the best of --repeat calls, each in a
session of its own; CPU: this process's, the lowest of them -- all of the work on SQLite,
the client side only on PostgreSQL):

  calibration     `batch_calibration(session, batch_id)` (GET /v1/batches/{id}/calibration)
  summary report  `summary_report(session, ReportFilters(batch_id=...))`, the reference
  comparison      `compare_batches(small, large)`, once, at the larger size

and two peaks: the Python heap's during one more call in this process (tracemalloc, above
what was allocated before it), and the growth of the resident set over the same call made
once by a fresh process that has only connected (Linux's VmHWM, reset through
/proc/self/clear_refs; this counts what tracemalloc cannot see -- the drivers' buffers,
SQLite's page cache -- and the first call's one-off costs, such as compiling statements).
`--profile` adds the cProfile of one calibration of the larger batch per database.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import os
import pstats
import random
import re
import tempfile
import time
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from scratch_db import fresh_database, session_factory
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.calibration.service import batch_calibration, compare_batches
from app.db.migrate import upgrade_to_head
from app.evidence import run_checks
from app.intake.batches import BatchBody, submit_batch
from app.llm.call import CallResult
from app.pipeline.group_commit import Finish, Recorder, Start
from app.pipeline.plan import NextCall
from app.pipeline.review_records import call_record, reading_of_record
from app.pipeline.ruling import ScreeningRuling
from app.policy import RoleResult, decide
from app.prompts import judge_messages, translator_messages
from app.reports.service import summary_report
from app.repositories import jobs
from app.repositories.jobs import ClaimedJob
from app.repositories.reports import ReportFilters
from app.settings import ProviderSettings, Settings
from app.vocabulary import Pair, Purpose, Role

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
POSTGRES = os.environ.get(
    "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
PROVIDER_EVERY, AUDIT_RATE, MAX_TOKENS, OWNER = 4, 0.02, 2048, "calibration-bench"
MODELS = {Role.TRANSLATOR: "translator-model", Role.JUDGE: "judge-model"}
MESSAGES = {Role.TRANSLATOR: translator_messages, Role.JUDGE: judge_messages}
# (translator, judge) answers; PROSE is a reply with no contract fields.
PROSE = "prose"
REPLY_KINDS = {
    "agree_faithful": ("FAITHFUL", "FAITHFUL"),
    "agree_mismatch": ("MISMATCH", "MISMATCH"),
    "judge_mismatch": ("FAITHFUL", "MISMATCH"),
    "judge_unclear": ("FAITHFUL", "UNCLEAR"),
    "unreadable": (PROSE, "FAITHFUL"),
}
# Per label, how often each kind is drawn: mostly right, sometimes wrong, sometimes unread.
LEANING = {
    "faithful": {"agree_faithful": 70, "judge_mismatch": 10, "judge_unclear": 10, "unreadable": 10},
    "mismatch": {
        "agree_mismatch": 55,
        "judge_mismatch": 20,
        "agree_faithful": 15,
        "unreadable": 10,
    },
}
NOT_A_TAG = re.compile(r"[^A-Za-z0-9_.:/-]+")


# --- Items -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Source:
    pair: Pair
    pair_id: str
    label: str
    tags: tuple[str, ...]


def tag(prefix: str, value: object) -> str:
    return f"{prefix}:{NOT_A_TAG.sub('_', str(value))}"[:64]


def source_of(row: dict[str, Any], label: str | None) -> Source:
    pair = Pair(row["informal"], row["formal"], row.get("header") or "")
    tags = [tag("source", row["id"].split("/")[0])]
    if row.get("split"):
        tags.append(tag("split", row["split"]))
    tags += [tag("topic", topic) for topic in (row.get("tags") or [])[:2]]
    if label is None:  # a fixed label per pair, 60/40
        label = "faithful" if zlib.crc32(row["id"].encode()) % 5 < 3 else "mismatch"
    else:
        tags.append("set:dev")
    return Source(pair, row["id"], label, tuple(tags))


def load_sources(data: Path) -> list[Source]:
    sources = []
    dev = data / "labelled" / "dev.jsonl"
    for line in dev.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sources.append(source_of(row, row["label"]))
    for path in sorted((data / "pairs").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("informal") and row.get("formal"):
                sources.append(source_of(row, None))
    return sources


def reply(answer: str, role: Role, informal: str) -> str:
    if answer == PROSE:
        return f"Looks right to me. {informal}\n"
    fields = [f"BACK-TRANSLATION: {informal}"] if role is Role.TRANSLATOR else []
    issues = "none" if answer == "FAITHFUL" else "the hypotheses differ"
    return "\n".join([*fields, f"VERDICT: {answer}", f"ISSUES: {issues}"]) + "\n"


def draw_kind(rng: random.Random, label: str) -> str:
    weights = LEANING[label]
    return rng.choices(list(weights), list(weights.values()))[0]


@dataclass(frozen=True, slots=True)
class Planned:
    item: dict[str, Any]
    # Set for an item screened "by a provider": the answers its two calls get.
    provider_kind: str | None


def plan_items(sources: list[Source], count: int, seed: int) -> list[Planned]:
    rng = random.Random(seed)
    planned = []
    for n in range(count):
        source = sources[n % len(sources)]
        copy = n // len(sources)
        pair = source.pair
        item: dict[str, Any] = {
            "informal": pair.informal,
            "formal": pair.formal,
            "header": pair.header + (f"\n-- copy {copy}" if copy else ""),
            "external_id": f"{source.pair_id}#{copy}",
            "label": source.label,
            "tags": [*source.tags, "half:a" if n % 2 else "half:b"],
        }
        kind = draw_kind(rng, source.label)
        if n % PROVIDER_EVERY == PROVIDER_EVERY - 1:
            planned.append(Planned(item | {"options": {"confirmations": 0}}, kind))
            continue
        translator, judge = REPLY_KINDS[kind]
        item["replies"] = {
            "translator": reply(translator, Role.TRANSLATOR, pair.informal),
            "judge": reply(judge, Role.JUDGE, pair.informal),
        }
        planned.append(Planned(item, None))
    return planned


# --- Storing (in a child process) --------------------------------------------------------------


def seed(url: str, data: Path, sizes: list[int]) -> dict[int, str]:
    """Migrate, then store one batch per size; returns size -> batch id."""
    upgrade_to_head(url)
    return asyncio.run(seed_batches(url, load_sources(data), sizes))


async def seed_batches(url: str, sources: list[Source], sizes: list[int]) -> dict[int, str]:
    provider = {"base_url": "http://127.0.0.1:9/v1"}  # needed to queue items; never called
    settings = Settings(
        database_url=url,
        translator=ProviderSettings(model=MODELS[Role.TRANSLATOR], **provider),
        judge=ProviderSettings(model=MODELS[Role.JUDGE], **provider),
        auth="off",
        max_batch_items=max(sizes),
    )
    batch_ids = {}
    async with session_factory(url) as sessions:
        for size in sizes:
            planned = plan_items(sources, size, seed=size)
            body = b"".join(json.dumps(p.item).encode() + b"\n" for p in planned)
            async with sessions() as session:
                batch = BatchBody.of(bytearray(body), "application/x-ndjson")
                accepted = await submit_batch(session, batch, settings, name=f"bench-{size}")
                await session.commit()
            kinds = {item_pair(p.item): p.provider_kind for p in planned if p.provider_kind}
            await screen_queued(sessions, kinds, random.Random(size))
            batch_ids[size] = accepted.batch.id
    return batch_ids


def item_pair(item: dict[str, Any]) -> Pair:
    return Pair(item["informal"], item["formal"], item["header"])


async def screen_queued(
    sessions: async_sessionmaker[AsyncSession], kinds: dict[Pair, str], rng: random.Random
) -> None:
    """What the worker stores for each queued item, through its own recorder."""
    recorder = Recorder(sessions)
    while True:
        async with sessions() as session:
            claimed = await jobs.claim(session, owner=OWNER, lease_seconds=3600, limit=500)
            await session.commit()
        if not claimed:
            return
        await asyncio.gather(*(screen_one(recorder, job, kinds, rng) for job in claimed))


async def screen_one(
    recorder: Recorder, job: ClaimedJob, kinds: dict[Pair, str], rng: random.Random
) -> None:
    started = await recorder.start(Start(job.id, OWNER, job.screening_id))
    assert started is not None
    pair = started.pair
    answers = dict(zip(MODELS, REPLY_KINDS[kinds[pair]], strict=True))
    records = []
    for role in MODELS:
        messages = MESSAGES[role](pair)
        result = provider_result(role, reply(answers[role], role, pair.informal), messages, rng)
        step = NextCall(1, Purpose.REVIEW, MAX_TOKENS)
        records.append(call_record(job.screening_id, role, step, messages, result))
    for record in records:
        await recorder.store(record)
    findings = tuple(run_checks(pair))
    translator, judge = (RoleResult(reading_of_record(record)) for record in records)
    ruling = ScreeningRuling(decide(translator, judge, findings, 0), findings)
    await recorder.finish(Finish(job.id, OWNER, job.screening_id, ruling, AUDIT_RATE))


def provider_result(
    role: Role, content: str, messages: list[Any], rng: random.Random
) -> CallResult:
    prompt_tokens = sum(len(message["content"]) for message in messages) // 4
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(content) // 4 + 1}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    choice = {"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    body = {"id": f"chatcmpl-{rng.getrandbits(48):x}", "model": MODELS[role], "usage": usage}
    return CallResult(
        content=content,
        finish_reason="stop",
        refusal=None,
        usage=usage,
        model=MODELS[role],
        http_status=200,
        latency_ms=int(rng.lognormvariate(7.0, 0.6)),  # ~1.1 s median, a long tail
        raw_body=json.dumps(body | {"choices": [choice]}),
        error=None,
        attempts=1,
        max_tokens=MAX_TOKENS,
    )


# --- Measuring --------------------------------------------------------------------------------


Call = Callable[[AsyncSession], Awaitable[Any]]
# What is measured, at which size, on which batches (the small batch first for a comparison).
Probe = tuple[int, str, tuple[str, ...]]


def call_of(name: str, batch_ids: tuple[str, ...]) -> Call:
    if name == "calibration":
        return lambda session: batch_calibration(session, batch_ids[0])
    if name == "summary report":
        filters = ReportFilters(batch_id=batch_ids[0])
        return lambda session: summary_report(session, filters)
    return lambda session: compare_batches(session, *batch_ids)


def probes(batch_ids: dict[int, str]) -> list[Probe]:
    chosen: list[Probe] = []
    for size, batch_id in sorted(batch_ids.items()):
        chosen += [(size, name, (batch_id,)) for name in ("calibration", "summary report")]
    small, large = min(batch_ids), max(batch_ids)
    if small != large:
        chosen.append((large, "comparison", (batch_ids[small], batch_ids[large])))
    return chosen


@dataclass(frozen=True, slots=True)
class Measured:
    seconds: float
    cpu: float
    heap_mb: float
    result: Any
    rss_mb: float = 0.0


async def run(sessions: async_sessionmaker[AsyncSession], call: Call) -> Any:
    async with sessions() as session:
        return await call(session)


async def measure(sessions: async_sessionmaker[AsyncSession], call: Call, repeat: int) -> Measured:
    """The best of `repeat` timed calls, then one more under tracemalloc."""
    times, cpus = [], []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        await run(sessions, call)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
    gc.collect()
    tracemalloc.start()
    floor = tracemalloc.get_traced_memory()[0]
    result = await run(sessions, call)
    heap_mb = (tracemalloc.get_traced_memory()[1] - floor) / 2**20
    tracemalloc.stop()
    return Measured(min(times), min(cpus), heap_mb, result)


async def measure_database(
    url: str, batch_ids: dict[int, str], repeat: int, profile: bool
) -> dict[tuple[int, str], Measured]:
    results: dict[tuple[int, str], Measured] = {}
    async with session_factory(url) as sessions:
        await run(sessions, call_of("calibration", (batch_ids[min(batch_ids)],)))  # warm up
        for size, name, ids in probes(batch_ids):
            results[size, name] = await measure(sessions, call_of(name, ids), repeat)
        for size in batch_ids:
            check(size, results[size, "calibration"].result, results[size, "summary report"].result)
        if profile:
            await profile_calibration(sessions, batch_ids[max(batch_ids)])
    return results


def kib(field: str) -> int:
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith(field)).split()[1])


def reset_peak_rss() -> None:
    """VmHWM := VmRSS (Linux 4.0+)."""
    Path("/proc/self/clear_refs").write_text("5")


def fresh_rss_growth(url: str, name: str, batch_ids: tuple[str, ...]) -> float:
    """MB the resident set of a fresh process grows by over one call (run in a child)."""
    return asyncio.run(_fresh_rss_growth(url, call_of(name, batch_ids)))


async def _fresh_rss_growth(url: str, call: Call) -> float:
    async with session_factory(url) as sessions:
        async with sessions() as session:
            await session.execute(text("SELECT 1"))  # connected: the call's own growth only
        gc.collect()
        before = kib("VmRSS")
        reset_peak_rss()
        await run(sessions, call)
        return (kib("VmHWM") - before) / 1024


def check(size: int, calibration: dict[str, Any], report: Any) -> None:
    assert calibration["labelled"] == size, (calibration["labelled"], size)
    assert report.screenings == size, (report.screenings, size)


async def profile_calibration(sessions: async_sessionmaker[AsyncSession], batch_id: str) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    await run(sessions, call_of("calibration", (batch_id,)))
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
    print(out.getvalue())


# --- Printing ---------------------------------------------------------------------------------


def row(*cells: object) -> str:
    return "| " + " | ".join(str(cell) for cell in cells) + " |"


def print_rows(database: str, results: dict[tuple[int, str], Measured]) -> None:
    for (size, run_name), measured in results.items():
        reference = results[size, "summary report"]
        print(
            row(
                database,
                f"{size:,}",
                run_name,
                f"{1000 * measured.seconds:,.0f}",
                f"{1000 * measured.cpu:,.0f}",
                f"{measured.seconds / reference.seconds:.2f}",
                f"{measured.heap_mb:.1f}",
                f"{measured.rss_mb:.1f}",
            ),
            flush=True,
        )


def print_growth(database: str, results: dict[tuple[int, str], Measured]) -> None:
    sizes = sorted({size for size, _ in results})
    if len(sizes) < 2:
        return
    small, large = sizes[0], sizes[-1]
    for run_name in ("calibration", "summary report"):
        a, b = results[small, run_name], results[large, run_name]
        print(
            f"({database} {run_name}: {large:,} vs {small:,} screenings: time x"
            f"{b.seconds / a.seconds:.2f}, heap peak x{b.heap_mb / a.heap_mb:.2f}, RSS growth "
            f"{a.rss_mb:.1f} -> {b.rss_mb:.1f} MB, "
            f"{1000 * b.seconds / large:.3f} ms a screening)"
        )


def print_outcomes(results: dict[tuple[int, str], Measured]) -> None:
    size = max(size for size, _ in results)
    calibration = results[size, "calibration"].result
    cells = ", ".join(
        f"{label} {outcome} {count}"
        for label, outcomes in calibration["matrix"].items()
        for outcome, count in outcomes.items()
    )
    configs = len(calibration["configs"])
    print(
        f"({size:,}-screening batch: {cells}; {configs} configs, {len(calibration['by_tag'])} tags)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--screenings", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=2_500, help="the smaller batch (0: none)")
    parser.add_argument("--repeat", type=int, default=5, help="keep the fastest of N calls")
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default=POSTGRES)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--profile", action="store_true", help="cProfile one calibration")
    args = parser.parse_args()
    if args.repeat < 1 or args.screenings < 1:
        parser.error("--repeat and --screenings must be at least 1")
    small = min(args.small, args.screenings)
    sizes = sorted({args.screenings, *([small] if small > 0 else [])})
    print(
        f"batches of {' and '.join(f'{s:,}' for s in sizes)} labelled screenings "
        f"(1 in {PROVIDER_EVERY} provider-style), best of {args.repeat}, "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(
        row(
            "database",
            "screenings",
            "run",
            "best ms",
            "CPU ms",
            "× report",
            "heap peak MB",
            "RSS growth MB",
        )
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    spawn = get_context("spawn")
    # A fresh process for every task: the seeding's memory is not ours, and each RSS
    # growth is a fresh process's.
    with (
        tempfile.TemporaryDirectory() as workdir,
        ProcessPoolExecutor(1, spawn, max_tasks_per_child=1) as child,
    ):
        for database in args.databases.split(","):
            with fresh_database(database, args.postgres_url, Path(workdir)) as url:
                started = time.perf_counter()
                batch_ids = child.submit(seed, url, args.data, sizes).result()
                stored = time.perf_counter() - started
                results = asyncio.run(measure_database(url, batch_ids, args.repeat, args.profile))
                for size, name, ids in probes(batch_ids):
                    rss = child.submit(fresh_rss_growth, url, name, ids).result()
                    results[size, name] = replace(results[size, name], rss_mb=rss)
            print_rows(database, results)
            print_growth(database, results)
            print_outcomes(results)
            print(f"({database}: stored in {stored:.0f} s)")
    print(f"RSS of this process at the end: {kib('VmRSS') / 1024:.0f} MB")


if __name__ == "__main__":
    main()
