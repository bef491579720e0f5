"""Scale test (issue 33, item 7): a deployment against a provider that enforces its limits.

    python bench/scale_bench.py [--pairs 20000] [--replicas 2] [--workers 16] [--rpm 720]
                                [--tpm 900000] [--provider-concurrency 32] [--max-in-flight N]
                                [--latency-ms 1000] [--llm-concurrency 2] [--capacity 2]
                                [--seed-reviews 1000000] [--quick] [--keep]

PostgreSQL (a database of its own, `--database faithscreen_scale` on the server of
FAITHSCREEN_TEST_POSTGRES_URL, created and dropped here), `--replicas` API processes
(`faithscreen serve --no-worker`) and `--workers` `faithscreen worker` processes (each
FAITHSCREEN_LLM_CONCURRENCY `--llm-concurrency`, FAITHSCREEN_WORKER_CAPACITY `--capacity`),
all given the provider's limits as their shared budgets (FAITHSCREEN_<ROLE>_REQUESTS_PER_
MINUTE, _TOKENS_PER_MINUTE; _MAX_IN_FLIGHT is `--max-in-flight`, by default the provider's
concurrency), against bench/limited_provider.py: per model (the translator's and the
judge's) the same RPM, TPM and calls in flight, 429 + Retry-After past any of them, a
log-normal latency around `--latency-ms`. Every process's output is in
$TMPDIR/faithscreen-scale-logs/.

Two keys each post a batch of half the pairs (real pairs from the shared data, read from
there, repeated when more are asked than it holds), the second `--second-batch-after`
seconds after the first; a third key posts single screenings through REST every
`--single-every` seconds while the batches run. Reported, against the issue's goals:

- lost and doubled work: every submitted screening done, exactly one first-attempt review
  per role each, and the provider's answered calls equal, prompt by prompt, to the reviews
  the service stored (the multiset of prompt digests on both sides);
- the seconds in which the provider refused a call for a limit (goal: at most 1% of the
  seconds it answered calls in);
- calls answered a second against the provider's binding limit (goal: at least 0.9);
- singles' latency while the batches run, created -> finished as stored (goal: p95 within
  two provider latencies, the mean of the latency distribution);
- each key's share of the batch work, per interval;
- GET /metrics scrape time on the empty database, after the run, and after seeding stored
  reviews by bulk SQL up to `--seed-reviews` (or as many as `--seed-minutes` allows).

CPU: the machine's busy share over the run (/proc/stat) and the service's CPU seconds are
printed; if the service cannot keep up with the provider's limit, throughput falls short
and the machine is busy: lower `--rpm` until the provider is the bottleneck.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import psycopg

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]
from batch_bench import cpu_seconds, load_pairs  # noqa: E402
from scale_checks import ledger, review_count, seed_reviews  # noqa: E402

from tests.support.serve_process import free_port  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")
POSTGRES = os.environ.get(
    "FAITHSCREEN_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test"
).replace("postgresql+psycopg://", "postgresql://")
LOGS = Path(tempfile.gettempdir()) / "faithscreen-scale-logs"
MODELS = {"translator": "translator-model", "judge": "judge-model"}


@contextmanager
def database(name: str, keep: bool) -> Iterator[str]:
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield POSTGRES.rsplit("/", 1)[0] + "/" + name
    finally:
        if not keep:
            with psycopg.connect(POSTGRES, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def provider(args: argparse.Namespace) -> Iterator[tuple[str, int]]:
    command = [sys.executable, "-m", "bench.limited_provider", "--rpm", str(args.rpm)]
    command += ["--tpm", str(args.tpm), "--concurrency", str(args.provider_concurrency)]
    command += ["--latency-ms", str(args.latency_ms), "--sigma", str(args.latency_sigma)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().rsplit(" ", 1)[-1].strip(), process.pid
    finally:
        process.terminate()
        process.wait()


def service_env(url: str, base_url: str, args: argparse.Namespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env.update(
        FAITHSCREEN_DATABASE_URL=url,
        FAITHSCREEN_LLM_CONCURRENCY=str(args.llm_concurrency),
        FAITHSCREEN_WORKER_CAPACITY=str(args.capacity),
        FAITHSCREEN_DATABASE_POOL_SIZE=str(args.pool_size),
        FAITHSCREEN_DATABASE_MAX_OVERFLOW=str(args.max_overflow),
        FAITHSCREEN_AUDIT_RATE="0",
    )
    for role, model in MODELS.items():
        prefix = f"FAITHSCREEN_{role.upper()}_"
        env[prefix + "BASE_URL"], env[prefix + "MODEL"] = base_url, model
        env[prefix + "API_KEY"] = "sk-bench"
        env[prefix + "REQUESTS_PER_MINUTE"] = str(int(args.rpm))
        env[prefix + "TOKENS_PER_MINUTE"] = str(int(args.tpm))
        env[prefix + "MAX_IN_FLIGHT"] = str(args.max_in_flight or args.provider_concurrency)
        env[prefix + "MAX_TOKENS"] = str(args.max_tokens)
        env[prefix + "TIMEOUT_SECONDS"] = "60"
    return env


def create_key(env: dict[str, str], role: str, name: str) -> str:
    done = subprocess.run(
        [FAITHSCREEN, "keys", "create", "--role", role, "--name", name],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1].strip()


@contextmanager
def service(
    env: dict[str, str], args: argparse.Namespace, api_ready: Callable[[list[str]], None]
) -> Iterator[tuple[list[str], list[int]]]:
    """The API replicas, started and answering, `api_ready(urls)`, then the workers; each
    process's output goes to LOGS/<name>.log."""
    LOGS.mkdir(parents=True, exist_ok=True)

    def start(name: str, *command: str, **extra: str) -> subprocess.Popen[bytes]:
        log = (LOGS / f"{name}.log").open("wb")
        return subprocess.Popen(
            [FAITHSCREEN, *command], env=dict(env, **extra), stdout=log, stderr=log
        )

    ports = [free_port() for _ in range(args.replicas)]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    api_pool = str(args.pool_size * 2)
    processes = [
        start(
            f"api-{i}",
            "serve",
            "--port",
            str(p),
            "--no-worker",
            FAITHSCREEN_DATABASE_POOL_SIZE=api_pool,
        )
        for i, p in enumerate(ports)
    ]
    try:
        wait_healthy(urls)
        api_ready(urls)
        processes += [start(f"worker-{i}", "worker") for i in range(args.workers)]
        yield urls, [p.pid for p in processes]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait()


def wait_healthy(urls: list[str]) -> None:
    deadline = time.monotonic() + 600  # a loaded machine imports slowly
    for url in urls:
        while time.monotonic() < deadline:
            try:
                if httpx2.get(url + "/healthz").status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            time.sleep(0.2)
        else:
            raise RuntimeError(f"{url} did not start")


def scrape_times(url: str, key: str, repeat: int = 5) -> tuple[float, list[float]]:
    """(median seconds, every scrape's seconds) of GET /metrics."""
    times = []
    with httpx2.Client(base_url=url, timeout=600, headers=auth(key)) as client:
        for _ in range(repeat):
            started = time.perf_counter()
            client.get("/metrics").raise_for_status()
            times.append(time.perf_counter() - started)
    return statistics.median(times), times


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Singles:
    """Posts a single screening every `every` seconds until stopped."""

    url: str
    key: str
    pairs: list[dict[str, Any]]
    every: float
    ids: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    refused: int = 0

    def run(self) -> None:
        with httpx2.Client(base_url=self.url, timeout=120, headers=auth(self.key)) as client:
            for i, pair in enumerate(self.pairs):
                if self.stop.wait(self.every):
                    return
                body = {k: pair[k] for k in ("informal", "formal", "header")}
                body["external_id"] = f"single-{i}"
                response = client.post(
                    "/v1/screenings", json=body, headers={"Idempotency-Key": f"single-{i}"}
                )
                if response.status_code in (200, 201, 202):
                    self.ids.append(response.json()["id"])
                else:
                    self.refused += 1


def post_batch(url: str, key: str, pairs: list[dict[str, Any]], name: str) -> str:
    with httpx2.Client(base_url=url, timeout=1200, headers=auth(key)) as client:
        response = client.post("/v1/batches", json={"items": pairs, "name": name})
        response.raise_for_status()
        return str(response.json()["id"])


def machine_busy() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def main() -> None:
    from scale_report import report

    args = parse_args()
    pairs = load_pairs(args.pairs + args.max_singles)
    batch_pairs, single_pairs = pairs[: args.pairs], pairs[args.pairs :]
    half = len(batch_pairs) // 2
    started_at = datetime.now().astimezone()
    run: dict[str, Any] = {"args": vars(args), "started_at": started_at.isoformat()}
    with database(args.database, args.keep) as url, provider(args) as (base_url, provider_pid):
        env = service_env(url, base_url, args)
        subprocess.run([FAITHSCREEN, "db", "upgrade"], env=env, check=True, capture_output=True)
        keys = {n: create_key(env, "submitter", f"bench-{n}") for n in ("a", "b", "singles")}
        metrics_key = create_key(env, "metrics", "bench-metrics")

        def scrape_empty(urls: list[str]) -> None:
            # Before the workers start: their start-up (imports) would be timed too.
            run["metrics_empty"] = scrape_times(urls[0], metrics_key)

        with service(env, args, scrape_empty) as (urls, pids):
            time.sleep(args.worker_start)  # workers start up (imports, first claim)
            run.update(
                drive(
                    args,
                    urls,
                    keys,
                    batch_pairs[:half],
                    batch_pairs[half:],
                    single_pairs,
                    pids,
                    provider_pid,
                    url,
                )
            )
            run["metrics_after_run"] = (review_count(url), scrape_times(urls[0], metrics_key))
            run["provider"] = httpx2.get(base_url.rsplit("/v1", 1)[0] + "/stats").json()
            run["ledger"] = ledger(url)
            if args.seed_reviews:
                deadline = time.monotonic() + 60 * args.seed_minutes
                seeded = seed_reviews(url, args.seed_reviews, deadline)
                first = scrape_times(urls[0], metrics_key, repeat=1)
                run["metrics_seeded"] = (seeded, first, scrape_times(urls[0], metrics_key))
    report(run, args, batch_pairs, single_pairs)


def drive(
    args: argparse.Namespace,
    urls: list[str],
    keys: dict[str, str],
    pairs_a: list[dict[str, Any]],
    pairs_b: list[dict[str, Any]],
    single_pairs: list[dict[str, Any]],
    pids: list[int],
    provider_pid: int,
    url: str,
) -> dict[str, Any]:
    cpu_before, provider_before, busy_before = (
        cpu_seconds(pids),
        cpu_seconds([provider_pid]),
        machine_busy(),
    )
    load_before = os.getloadavg()
    started = time.monotonic()
    batch_a = post_batch(urls[0], keys["a"], pairs_a, "scale-a")
    ingest_a = time.monotonic() - started
    singles = Singles(urls[-1], keys["singles"], single_pairs, args.single_every)
    thread = threading.Thread(target=singles.run, daemon=True)
    thread.start()
    time.sleep(max(0.0, args.second_batch_after - ingest_a))
    b_posted = time.monotonic() - started
    batch_b = post_batch(urls[-1], keys["b"], pairs_b, "scale-b")
    ingest_b = time.monotonic() - started - b_posted
    samples = sample_progress(urls[0], keys, {"a": batch_a, "b": batch_b}, started, args)
    singles.stop.set()
    thread.join()
    wait_singles(urls[0], keys["singles"], singles.ids, deadline=time.monotonic() + 300)
    wall = time.monotonic() - started
    busy_after = machine_busy()
    return {
        "wall": wall,
        "ingest": (ingest_a, ingest_b),
        "b_posted": b_posted,
        "samples": samples,
        "singles": single_latencies(url, singles.ids),
        "single_parts": single_parts(url, singles.ids),
        "singles_refused": singles.refused,
        "service_cpu": cpu_seconds(pids) - cpu_before,
        "provider_cpu": cpu_seconds([provider_pid]) - provider_before,
        "machine_busy": (busy_after[0] - busy_before[0]) / max(1, busy_after[1] - busy_before[1]),
        "load": (load_before, os.getloadavg()),
    }


def sample_progress(
    url: str,
    keys: dict[str, str],
    batches: dict[str, str],
    started: float,
    args: argparse.Namespace,
) -> list[tuple[float, int, int, int, int]]:
    """(seconds since the first POST, batch A done, batch B done, database connections open,
    of them active) every --sample-every s."""
    samples: list[tuple[float, int, int, int, int]] = []
    with httpx2.Client(base_url=url, timeout=120) as client:
        while True:
            done = []
            for name, batch in batches.items():
                status = client.get(f"/v1/batches/{batch}", headers=auth(keys[name])).json()
                done.append((status["done"], status["total"]))
            connections = database_connections(args.database)
            samples.append((time.monotonic() - started, done[0][0], done[1][0], *connections))
            print(
                f"  {samples[-1][0]:7.1f} s  A {done[0][0]:>6}/{done[0][1]}  "
                f"B {done[1][0]:>6}/{done[1][1]}  connections {connections}",
                flush=True,
            )
            if all(d >= t for d, t in done):
                return samples
            time.sleep(args.sample_every)


def database_connections(name: str) -> tuple[int, int]:
    """(connections open to the bench's database, of them not idle) right now."""
    with psycopg.connect(POSTGRES, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*), count(*) FILTER (WHERE state <> 'idle') FROM pg_stat_activity "
            "WHERE datname = %s",
            (name,),
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def wait_singles(url: str, key: str, ids: list[str], deadline: float) -> None:
    with httpx2.Client(base_url=url, timeout=60, headers=auth(key)) as client:
        for screening_id in ids:
            while time.monotonic() < deadline:
                if client.get(f"/v1/screenings/{screening_id}").json()["status"] == "done":
                    break
                time.sleep(0.5)


def single_latencies(url: str, ids: list[str]) -> list[float]:
    """Seconds from stored to finished of each single screening, as the database has them."""
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT extract(epoch FROM finished_at - created_at) FROM screenings "
            "WHERE id = ANY(%s) AND finished_at IS NOT NULL",
            (ids,),
        ).fetchall()
    return sorted(float(r[0]) for r in rows)


def single_parts(url: str, ids: list[str]) -> dict[str, list[float]]:
    """Where a single's time went, as stored: created -> its first call began (the claim;
    a review's created_at less its latency_ms), and the slower of its calls (latency_ms:
    the budget's wait and the provider's answer); and every call's latency_ms."""
    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT s.id, extract(epoch FROM r.created_at - s.created_at), r.latency_ms "
            "FROM screenings s JOIN reviews r ON r.screening_id = s.id "
            "WHERE s.id = ANY(%s) AND r.latency_ms IS NOT NULL",
            (ids,),
        ).fetchall()
    first: dict[str, float] = {}
    slower: dict[str, float] = {}
    for screening_id, stored, latency_ms in rows:
        began = float(stored) - latency_ms / 1000
        first[screening_id] = min(first.get(screening_id, began), began)
        slower[screening_id] = max(slower.get(screening_id, 0.0), latency_ms / 1000)
    return {
        "to_first_call": sorted(first.values()),
        "slower_call": sorted(slower.values()),
        "calls": sorted(float(row[2]) / 1000 for row in rows),
    }


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add = parser.add_argument
    add("--pairs", type=int, default=20_000, help="pairs in the two batches together")
    add("--replicas", type=int, default=2)
    add("--workers", type=int, default=16)
    add("--rpm", type=float, default=720, help="provider's requests a minute, per model")
    add("--tpm", type=float, default=900_000, help="provider's tokens a minute, per model")
    add(
        "--provider-concurrency", type=int, default=32, help="provider's calls in flight, per model"
    )
    add(
        "--max-in-flight",
        type=int,
        default=0,
        help="the service's shared FAITHSCREEN_<ROLE>_MAX_IN_FLIGHT (0: the provider's)",
    )
    add("--latency-ms", type=float, default=1000.0, help="provider's median latency")
    add("--latency-sigma", type=float, default=0.35)
    add("--max-tokens", type=int, default=512)
    add("--llm-concurrency", type=int, default=2, help="FAITHSCREEN_LLM_CONCURRENCY per process")
    add("--capacity", type=int, default=2, help="FAITHSCREEN_WORKER_CAPACITY per worker")
    add("--pool-size", type=int, default=2, help="database pool per worker (API: twice)")
    add("--max-overflow", type=int, default=2)
    add("--second-batch-after", type=float, default=60.0)
    add("--single-every", type=float, default=2.0)
    add("--max-singles", type=int, default=2000)
    add("--sample-every", type=float, default=10.0)
    add("--seed-reviews", type=int, default=1_000_000)
    add("--seed-minutes", type=float, default=15.0)
    add("--quick", action="store_true", help="1,000 pairs, 4 workers, 100,000 seeded reviews")
    add("--worker-start", type=float, default=20.0, help="seconds given the workers to start")
    add("--database", default="faithscreen_scale", help="created and dropped on the server")
    add("--keep", action="store_true", help="keep the database afterwards")
    if parser.parse_known_args()[0].quick:  # smaller defaults; options given still count
        parser.set_defaults(pairs=1000, workers=4, seed_reviews=100_000, llm_concurrency=4)
        parser.set_defaults(capacity=4, second_batch_after=10.0, sample_every=5.0)
        parser.set_defaults(max_singles=200)
    args = parser.parse_args()
    callers = args.workers * args.llm_concurrency
    if callers > (args.max_in_flight or args.provider_concurrency):
        # Calls past the shared in-flight budget poll its row under the row's lock: see
        # docs/operations.md, Sizing for a million pairs a day.
        print(
            f"warning: {args.workers} workers x {args.llm_concurrency} calls each exceed "
            "the shared calls in flight; the excess polls the budget's row",
            flush=True,
        )
    return args


if __name__ == "__main__":
    main()
