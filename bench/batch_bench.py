"""Batch throughput benchmark: a batch of pairs against a scripted provider with a fixed
latency, as a ratio of the ideal, next to a minimal asyncio loop making the same calls.

    python bench/batch_bench.py [--pairs 2000] [--latency-ms 100] [--concurrency 64 256]
                                [--configs sqlite:1 postgres:1 postgres:2]

For each configuration (database : worker processes) it starts a real service on loopback
(`faithscreen serve` with the embedded worker for one worker; `serve --no-worker` plus N
`faithscreen worker` processes otherwise), posts one batch, and waits until every item is
done. C is the total number of calls in flight at the provider: each process gets
C / (2 roles x N workers) per provider. The ideal wall time is calls x latency / C.

Printed per run: wall time, ideal / wall (1.0 is the ideal), the reference loop's wall
time and ours as a ratio of it (the cost of our bookkeeping), the service's CPU time per
screened pair (all its processes), and the peak resident memory of its largest process.
PostgreSQL runs use a fresh database on FAITHSCREEN_TEST_POSTGRES_URL's server
(default postgresql://postgres@127.0.0.1:5432/test), dropped afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import psycopg

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "pairs"
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


@contextmanager
def scripted_provider(latency_ms: float) -> Iterator[str]:
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
        yield line.rsplit(" ", 1)[-1].strip()
    finally:
        process.terminate()
        process.wait()


async def reference_loop(base_url: str, calls: int, concurrency: int) -> float:
    """The same calls with no storage: a semaphore, a pooled client, nothing else."""
    limits = httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    gate = asyncio.Semaphore(concurrency)
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 64}
    async with httpx2.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:

        async def one() -> None:
            async with gate:
                response = await client.post("/chat/completions", json=body)
                response.json()

        started = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(calls)))
        return time.perf_counter() - started


@dataclass
class Run:
    config: str
    concurrency: int
    wall: float
    ingest: float
    cpu_seconds: float
    peak_rss_mb: float


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


def service_env(database_url: str, provider: str, per_process: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env.update(
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_AUTH="off",
        FAITHSCREEN_LLM_CONCURRENCY=str(per_process),
        FAITHSCREEN_TRANSLATOR_BASE_URL=provider,
        FAITHSCREEN_TRANSLATOR_MODEL="translator-model",
        FAITHSCREEN_JUDGE_BASE_URL=provider,
        FAITHSCREEN_JUDGE_MODEL="judge-model",
    )
    return env


def start_service(env: dict[str, str], workers: int, port: int) -> list[subprocess.Popen[bytes]]:
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    serve = [FAITHSCREEN, "serve", "--port", str(port)]
    if workers == 1:
        return [subprocess.Popen(serve, **quiet)]  # type: ignore[call-overload]
    processes = [subprocess.Popen([*serve, "--no-worker"], **quiet)]  # type: ignore[call-overload]
    processes += [subprocess.Popen([FAITHSCREEN, "worker"], **quiet) for _ in range(workers)]  # type: ignore[call-overload]
    return processes


def wait_healthy(client: httpx2.Client) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if client.get("/healthz").status_code == 200:
                return
        except httpx2.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the service did not start")


def screen_batch(client: httpx2.Client, pairs: list[dict[str, Any]]) -> tuple[float, float]:
    """(ingest seconds, seconds from the POST until every item is done)."""
    started = time.perf_counter()
    response = client.post("/v1/batches", json={"items": pairs, "name": "bench"})
    response.raise_for_status()
    ingest = time.perf_counter() - started
    batch_id = response.json()["id"]
    while True:
        status = client.get(f"/v1/batches/{batch_id}").json()
        if status["done"] >= status["total"]:
            return ingest, time.perf_counter() - started
        time.sleep(0.05)


def run_config(config: str, concurrency: int, provider: str, pairs: list[dict[str, Any]]) -> Run:
    kind, workers_text = config.split(":")
    workers = int(workers_text)
    per_process = max(1, concurrency // (2 * workers))
    with database(kind) as url:
        env = service_env(url, provider, per_process)
        subprocess.run([FAITHSCREEN, "db", "upgrade"], env=env, check=True, capture_output=True)
        port = 18000 + secrets.randbelow(2000)
        processes = start_service(env, workers, port)
        try:
            with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=300) as client:
                wait_healthy(client)
                ingest, wall = screen_batch(client, pairs)
            stats = [process_stats(p.pid) for p in processes]
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait()
    cpu = sum(s[0] for s in stats)
    return Run(config, concurrency, wall, ingest, cpu, max(s[1] for s in stats))


HEADER = (
    "config",
    "C",
    "wall s",
    "ideal s",
    "ideal/wall",
    "reference s",
    "ours/reference",
    "ingest s",
    "CPU ms/pair",
    "peak RSS MB",
)


def row(*cells: object) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def run_row(run: Run, ideal: float, reference: float, pairs: int) -> str:
    return row(
        run.config,
        run.concurrency,
        f"{run.wall:.2f}",
        f"{ideal:.2f}",
        f"{ideal / run.wall:.2f}",
        f"{reference:.2f}",
        f"{run.wall / reference:.2f}",
        f"{run.ingest:.2f}",
        f"{1000 * run.cpu_seconds / pairs:.2f}",
        f"{run.peak_rss_mb:.0f}",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--configs", nargs="+", default=["sqlite:1", "postgres:1", "postgres:2"])
    args = parser.parse_args()
    pairs = load_pairs(args.pairs)
    calls = 2 * len(pairs)
    latency = args.latency_ms / 1000
    print(f"{len(pairs)} pairs, {calls} calls, latency {args.latency_ms:.0f} ms")
    print(row(*HEADER))
    print(row(*(["---"] + ["---:"] * (len(HEADER) - 1))))
    with scripted_provider(args.latency_ms) as provider:
        for concurrency in args.concurrency:
            ideal = calls * latency / concurrency
            reference = asyncio.run(reference_loop(provider, calls, concurrency))
            ratio = f"{ideal / reference:.2f}"
            print(
                row(
                    "reference loop",
                    concurrency,
                    f"{reference:.2f}",
                    f"{ideal:.2f}",
                    ratio,
                    "",
                    "",
                    "",
                    "",
                    "",
                )
            )
            for config in args.configs:
                run = run_config(config, concurrency, provider, pairs)
                print(run_row(run, ideal, reference, len(pairs)), flush=True)


if __name__ == "__main__":
    main()
