"""Batch throughput benchmark: a batch of pairs against a scripted provider with a fixed
latency, as a ratio of the ideal, next to a minimal asyncio loop making the same calls.

    python bench/batch_bench.py [--pairs 2000] [--latency-ms 100] [--concurrency 64 256]
                                [--configs sqlite:1 postgres:1 postgres:2] [--judges 3]

For each configuration (database : worker processes) it starts a real service on loopback
(`faithscreen serve` with the embedded worker for one worker; `serve --no-worker` plus N
`faithscreen worker` processes otherwise), posts one batch, and waits until every item is
done. C is the total number of calls in flight at the provider: each process gets
C / (S seats x N workers) per provider, S being the translator and the judges (2 with the
single judge; `--judges 3` runs a panel of three, FAITHSCREEN_JUDGES=a,b,c, each judge its
own model and client). The ideal wall time is calls x latency / C, with S calls a pair;
`calls/pair` is what the service stored (its report), S when no call had to be repeated.

The reference is a bare asyncio loop making the same calls (the same prompts, both roles,
C in flight) with aiohttp and no storage, in this process: one session whose connector
holds C connections and a semaphore of C, as the service's client (app/llm/client.py), so
the ratio measures the service's bookkeeping, not a difference of HTTP client.

Printed per run: wall time, ideal / wall (1.0 is the ideal), the reference loop's wall
time and ours as a ratio of it (the cost of our bookkeeping), the service's CPU time per
screened pair (all its processes, counted from the POST until every item is done, so
start-up is left out), the scripted provider's CPU time per call over the same span (it
shares the machine's cores with the service), and the peak resident memory of the
service's largest process. `--repeat N` runs each configuration N times and keeps the
fastest run (the machine may be shared).
`--profile PREFIX` runs each service process under cProfile (or `--profiler pyinstrument`;
see bench/profiled_service.py)
from the POST until every item is done, and writes PREFIX-<config>-C<C>-<process>.prof
(read them with `python -m pstats`), with each thread's CPU time over the same span
(cProfile sees the event loop's thread only; aiosqlite runs SQLite in a thread of its
own). Profiled runs are slower: their timings are not comparable with unprofiled ones.
PostgreSQL runs use a fresh database on FAITHSCREEN_TEST_POSTGRES_URL's server
(default postgresql://postgres@127.0.0.1:5432/test), dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import httpx2
import psycopg

from app.prompts import judge_messages, translator_messages
from app.vocabulary import Pair

ROOT = Path(__file__).resolve().parents[1]
# ../shared/data/pairs from the main checkout; /work/shared from a worktree elsewhere.
DATA = next(
    (
        p
        for p in (ROOT.parent / "shared" / "data" / "pairs", Path("/work/shared/data/pairs"))
        if p.is_dir()
    ),
    ROOT.parent / "shared" / "data" / "pairs",
)
FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")
POSTGRES = os.environ.get(
    "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def load_pairs(count: int) -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("informal") and row.get("formal"):
                pairs.append(
                    {
                        "informal": row["informal"],
                        "formal": row["formal"],
                        "header": row.get("header") or "",
                        "external_id": row["id"],
                    }
                )
    # Repeat the corpus if more pairs are asked than it holds; ids stay unique.
    return [dict(pairs[i % len(pairs)], external_id=f"{i}") for i in range(count)]


@dataclass
class Provider:
    url: str
    pid: int


@contextmanager
def scripted_provider(latency_ms: float) -> Iterator[Provider]:
    command = [
        sys.executable,
        "-m",
        "tests.support.scripted_openai",
        "--latency-ms",
        str(latency_ms),
    ]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        yield Provider(line.rsplit(" ", 1)[-1].strip(), process.pid)
    finally:
        process.terminate()
        process.wait()


def judge_models(judges: int) -> dict[str, str]:
    """Judge name -> model: the single judge, or a panel of `judges` (a, b, c, ...)."""
    if judges == 1:
        return {"judge": "judge-model"}
    return {chr(ord("a") + i): f"judge-{chr(ord('a') + i)}-model" for i in range(judges)}


def reference_bodies(pairs: list[dict[str, Any]], judges: int) -> list[dict[str, Any]]:
    """The request bodies of the service's first calls: every seat's prompt for each pair."""
    bodies = []
    for row_ in pairs:
        pair = Pair(row_["informal"], row_["formal"], row_["header"])
        seats = [("translator-model", translator_messages(pair))]
        seats += [(model, judge_messages(pair)) for model in judge_models(judges).values()]
        for model, messages in seats:
            body = {"model": model, "messages": messages, "max_tokens": 2048, "temperature": 0.0}
            bodies.append(body)
    return bodies


async def reference_loop(base_url: str, bodies: list[dict[str, Any]], concurrency: int) -> float:
    """The same calls with no storage: a semaphore, one pooled session, nothing else."""
    gate = asyncio.Semaphore(concurrency)
    url = base_url.rstrip("/") + "/chat/completions"
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=0)
    timeout = aiohttp.ClientTimeout(total=60)

    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one(body: dict[str, Any]) -> None:
            async with gate, session.post(url, json=body) as response:
                json.loads(await response.read())

        started = time.perf_counter()
        await asyncio.gather(*(one(body) for body in bodies))
        return time.perf_counter() - started


@dataclass
class Run:
    config: str
    concurrency: int
    wall: float
    ingest: float
    cpu_seconds: float
    provider_cpu_seconds: float
    peak_rss_mb: float
    calls_per_pair: float


def process_stats(pid: int) -> tuple[float, float]:
    """(CPU seconds, peak RSS in MB) of a live process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    status = Path(f"/proc/{pid}/status").read_text()
    peak_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
    return cpu, peak_kb / 1024


@contextmanager
def database(kind: str) -> Iterator[str]:
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/bench.db"
        return
    name = f"faithscreen_bench_{secrets.token_hex(4)}"
    admin = POSTGRES.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def service_env(database_url: str, provider: str, per_process: int, judges: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env.update(
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_AUTH="off",
        FAITHSCREEN_LLM_CONCURRENCY=str(per_process),
        FAITHSCREEN_TRANSLATOR_BASE_URL=provider,
        FAITHSCREEN_TRANSLATOR_MODEL="translator-model",
    )
    if judges == 1:
        env.update(FAITHSCREEN_JUDGE_BASE_URL=provider, FAITHSCREEN_JUDGE_MODEL="judge-model")
        return env
    models = judge_models(judges)
    env["FAITHSCREEN_JUDGES"] = ",".join(models)
    for name, model in models.items():
        env[f"FAITHSCREEN_JUDGE_{name.upper()}_BASE_URL"] = provider
        env[f"FAITHSCREEN_JUDGE_{name.upper()}_MODEL"] = model
    return env


def start_service(
    env: dict[str, str], workers: int, port: int, profile: str | None = None, profiler: str = ""
) -> list[subprocess.Popen[bytes]]:
    """The service's processes; with `profile`, each under bench/profiled_service.py,
    writing `profile`-<index>.prof when told to (see `profiled`)."""
    command = [FAITHSCREEN]
    if profile is not None:
        command = [sys.executable, str(ROOT / "bench" / "profiled_service.py")]

    def start(index: int, *args: str) -> subprocess.Popen[bytes]:
        process_env = dict(env)
        if profile is not None:
            process_env["FAITHSCREEN_BENCH_PROFILE"] = f"{profile}-{index}.prof"
            process_env["FAITHSCREEN_BENCH_PROFILER"] = profiler
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        return subprocess.Popen([*command, *args], env=process_env, **quiet)  # type: ignore[call-overload]

    serve = ["serve", "--port", str(port)]
    if workers == 1:
        return [start(0, *serve)]
    return [start(0, *serve, "--no-worker")] + [start(i + 1, "worker") for i in range(workers)]


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of each thread of a live process, by "tid name"."""
    times = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = (task / "comm").read_text().strip()
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:  # the thread ended
            continue
        times[f"{task.name} {name}"] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return times


@contextmanager
def profiled(processes: list[subprocess.Popen[bytes]], prefix: str | None) -> Iterator[None]:
    """With a prefix: profile every process while the block runs (SIGUSR1 / SIGUSR2),
    wait for their stats files, and print each thread's CPU time over the block."""
    if prefix is None:
        yield
        return
    before = {p.pid: thread_cpu(p.pid) for p in processes}
    for process in processes:
        process.send_signal(signal.SIGUSR1)
    yield
    for process in processes:
        process.send_signal(signal.SIGUSR2)
    for index, process in enumerate(processes):
        path = Path(f"{prefix}-{index}.prof")
        deadline = time.monotonic() + 60
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        after = thread_cpu(process.pid)
        spent = {
            thread: seconds - before[process.pid].get(thread, 0.0)
            for thread, seconds in after.items()
        }
        busy = ", ".join(f"{t}: {s:.2f} s" for t, s in sorted(spent.items()) if s >= 0.01)
        print(f"  {path} (threads' CPU: {busy})", flush=True)


def wait_healthy(client: httpx2.Client) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if client.get("/healthz").status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the service did not start")


def screen_batch(client: httpx2.Client, pairs: list[dict[str, Any]]) -> tuple[float, float, str]:
    """(ingest seconds, seconds from the POST until every item is done, the batch id)."""
    started = time.perf_counter()
    response = client.post("/v1/batches", json={"items": pairs, "name": "bench"})
    response.raise_for_status()
    ingest = time.perf_counter() - started
    batch_id = response.json()["id"]
    while True:
        status = client.get(f"/v1/batches/{batch_id}").json()
        elapsed = time.perf_counter() - started
        if status["done"] >= status["total"]:
            return ingest, elapsed, batch_id
        time.sleep(poll_wait(elapsed, status["done"], status["total"]))


def poll_wait(elapsed: float, done: int, total: int) -> float:
    """A quarter of the time the batch still needs at its rate so far, within 50 ms and
    1 s: each poll costs the service a progress query (every 50 ms, that was ~4% of its
    CPU), while the end is still seen within 50 ms."""
    if done == 0:
        return 0.25
    remaining = elapsed * (total - done) / done
    return min(1.0, max(0.05, remaining / 4))


def cpu_seconds(pids: list[int]) -> float:
    return sum(process_stats(pid)[0] for pid in pids)


def stored_calls(client: httpx2.Client, batch_id: str) -> int:
    """The calls the service stored for the batch, every seat and attempt (its report)."""
    report = client.get("/v1/reports/summary", params={"batch_id": batch_id}).json()
    return sum(group["calls"] for group in report["groups"])


def run_config(
    config: str,
    concurrency: int,
    provider: Provider,
    pairs: list[dict[str, Any]],
    judges: int,
    profile: str | None = None,
    profiler: str = "cprofile",
) -> Run:
    kind, workers_text = config.split(":")
    workers = int(workers_text)
    per_process = max(1, concurrency // ((1 + judges) * workers))
    with database(kind) as url:
        env = service_env(url, provider.url, per_process, judges)
        subprocess.run([FAITHSCREEN, "db", "upgrade"], env=env, check=True, capture_output=True)
        port = 18000 + secrets.randbelow(2000)
        if profile is not None:
            profile = f"{profile}-{kind}{workers}-C{concurrency}"
        processes = start_service(env, workers, port, profile, profiler)
        pids = [p.pid for p in processes]
        try:
            with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
                wait_healthy(client)
                time.sleep(1)  # workers start up after the API answers
                before, provider_before = cpu_seconds(pids), cpu_seconds([provider.pid])
                with profiled(processes, profile):
                    ingest, wall, batch_id = screen_batch(client, pairs)
                cpu = cpu_seconds(pids) - before
                provider_cpu = cpu_seconds([provider.pid]) - provider_before
                calls = stored_calls(client, batch_id)
            peak = max(process_stats(pid)[1] for pid in pids)
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait()
    return Run(config, concurrency, wall, ingest, cpu, provider_cpu, peak, calls / len(pairs))


HEADER = (
    "config",
    "C",
    "calls/pair",
    "wall s",
    "ideal s",
    "ideal/wall",
    "reference s",
    "ours/reference",
    "ingest s",
    "CPU ms/pair",
    "provider CPU ms/call",
    "peak RSS MB",
)


def row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def run_row(run: Run, ideal: float, reference: float, pairs: int) -> str:
    return row(
        run.config,
        run.concurrency,
        f"{run.calls_per_pair:.2f}",
        f"{run.wall:.2f}",
        f"{ideal:.2f}",
        f"{ideal / run.wall:.2f}",
        f"{reference:.2f}",
        f"{run.wall / reference:.2f}",
        f"{run.ingest:.2f}",
        f"{1000 * run.cpu_seconds / pairs:.2f}",
        f"{1000 * run.provider_cpu_seconds / (run.calls_per_pair * pairs):.2f}",
        f"{run.peak_rss_mb:.0f}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--configs", nargs="+", default=["sqlite:1", "postgres:1", "postgres:2"])
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs")
    parser.add_argument(
        "--judges", type=int, default=1, help="1: the single judge; N > 1: a panel of N"
    )
    parser.add_argument(
        "--profile", metavar="PREFIX", help="profile each service process into PREFIX-*.prof"
    )
    parser.add_argument("--profiler", choices=["cprofile", "pyinstrument"], default="cprofile")
    args = parser.parse_args()
    pairs = load_pairs(args.pairs)
    bodies = reference_bodies(pairs, args.judges)
    calls = (1 + args.judges) * len(pairs)
    latency = args.latency_ms / 1000
    load = os.getloadavg()[0]
    judges = "single judge" if args.judges == 1 else f"panel of {args.judges} judges"
    print(
        f"{len(pairs)} pairs, {judges}, {calls} calls, latency {args.latency_ms:.0f} ms, "
        f"load {load:.2f}"
    )
    print(row(*HEADER))
    print(row(*(["---"] + ["---:"] * (len(HEADER) - 1))))
    with scripted_provider(args.latency_ms) as provider:
        for concurrency in args.concurrency:
            ideal = calls * latency / concurrency
            references = [reference_run(provider, bodies, concurrency) for _ in range(args.repeat)]
            reference = min(references, key=lambda r: r.wall)
            print(reference_row(concurrency, reference, ideal, calls, len(pairs)), flush=True)
            for config in args.configs:
                runs = [
                    run_config(
                        config,
                        concurrency,
                        provider,
                        pairs,
                        args.judges,
                        args.profile,
                        args.profiler,
                    )
                    for _ in range(args.repeat)
                ]
                run = min(runs, key=lambda r: r.wall)
                print(run_row(run, ideal, reference.wall, len(pairs)), flush=True)


@dataclass
class ReferenceRun:
    wall: float
    cpu_seconds: float
    provider_cpu_seconds: float


def reference_run(
    provider: Provider, bodies: list[dict[str, Any]], concurrency: int
) -> ReferenceRun:
    cpu, provider_cpu = time.process_time(), cpu_seconds([provider.pid])
    wall = asyncio.run(reference_loop(provider.url, bodies, concurrency))
    return ReferenceRun(wall, time.process_time() - cpu, cpu_seconds([provider.pid]) - provider_cpu)


def reference_row(concurrency: int, run: ReferenceRun, ideal: float, calls: int, pairs: int) -> str:
    return row(
        "reference loop",
        concurrency,
        f"{calls / pairs:.2f}",
        f"{run.wall:.2f}",
        f"{ideal:.2f}",
        f"{ideal / run.wall:.2f}",
        "",
        "",
        "",
        f"{1000 * run.cpu_seconds / pairs:.2f}",
        f"{1000 * run.provider_cpu_seconds / calls:.2f}",
        "",
    )


if __name__ == "__main__":
    main()
