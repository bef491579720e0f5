"""Ingest benchmark: batch intake against single submissions, in the same run.

    python bench/ingest_bench.py [--singles N] [--batch-items B] [--repeat R]
                                 [--databases sqlite,postgres] [--postgres-url URL] [--data DIR]

Everything goes over HTTP to a real `faithscreen serve --no-worker` process on loopback
(uvicorn, the real middleware and error handling), so both rates include what a client
pays. For each database (a fresh SQLite file; a fresh PostgreSQL database, dropped after)
and each kind of item it measures

  single  N sequential POST /v1/screenings (one keep-alive connection), items/s;
  batch   one POST /v1/batches carrying B items (JSON), items/s including the upload;

each on a database of its own, so neither finds the other's pairs stored. Kinds:

  queued    items for the worker (providers configured, none called: no worker runs) --
            ingest proper: validate, store the pair, the screening and its job;
  supplied  items with `replies`, decided during the request: ingest plus parsing both
            replies, the evidence checks and the policy for every item.

Pairs come from ../shared/data/pairs/*.jsonl (rows with a null informal statement are
skipped); past the 2,056 distinct pairs, copies get a header comment so every item stays a
distinct pair. Each measurement runs R times (default 3) and the best rate counts, since a
shared machine only ever slows a run down. Prints each rate and the batch/single ratio
(issue 4's target: >= 20x).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
from scratch_db import fresh_database

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "pairs"
FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")
TRANSLATOR_REPLY = "BACK-TRANSLATION: The statement as given.\nVERDICT: FAITHFUL\nISSUES: none\n"
JUDGE_REPLY = "VERDICT: FAITHFUL\nISSUES: none\n"
# Configured so queued items are accepted; nothing calls it (the server runs no worker).
PROVIDER_ENV = {
    f"FAITHSCREEN_{role}_{name}": value
    for role in ("TRANSLATOR", "JUDGE")
    for name, value in (("BASE_URL", "http://127.0.0.1:9/v1"), ("MODEL", "unused"))
}
KINDS = ("queued", "supplied")


def load_pairs(data: Path) -> list[dict[str, str]]:
    pairs = []
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row.get("informal") is None:
                continue
            pairs.append({"informal": row["informal"], "formal": row["formal"], "id": row["id"]})
            pairs[-1]["header"] = row.get("header") or ""
    return pairs


def items(pairs: list[dict[str, str]], count: int, kind: str) -> list[dict[str, Any]]:
    made = []
    for n in range(count):
        pair = pairs[n % len(pairs)]
        copy = n // len(pairs)
        header = pair["header"] + (f"\n-- copy {copy}" if copy else "")
        item: dict[str, Any] = {"informal": pair["informal"], "formal": pair["formal"]}
        item |= {"header": header, "external_id": f"{pair['id']}#{copy}"}
        if kind == "supplied":
            item["replies"] = {"translator": TRANSLATOR_REPLY, "judge": JUDGE_REPLY}
        made.append(item)
    return made


# --- Databases and servers ------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(database_url: str, workdir: Path) -> Iterator[str]:
    """`faithscreen serve --no-worker` on a free port; yields its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    # No API keys: the server binds to loopback only, and key checks are not what is measured.
    env |= PROVIDER_ENV | {"FAITHSCREEN_DATABASE_URL": database_url, "FAITHSCREEN_AUTH": "off"}
    command = [FAITHSCREEN, "serve", "--no-worker", "--host", "127.0.0.1", "--port", str(port)]
    log = (workdir / "serve.log").open("ab")
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
    base_url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(process, base_url)
        yield base_url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        log.close()


def wait_healthy(process: subprocess.Popen[bytes], base_url: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("serve exited early; see serve.log")
        try:
            if httpx2.get(f"{base_url}/healthz", timeout=1).status_code == 200:
                return
        except httpx2.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("serve did not become healthy")


# --- Measuring ------------------------------------------------------------------------------


def single_rate(base_url: str, batch: list[dict[str, Any]]) -> float:
    with httpx2.Client(base_url=base_url, timeout=60) as client:
        client.post("/v1/screenings", json=batch[0]).raise_for_status()  # warm up
        started = time.perf_counter()
        for item in batch[1:]:
            response = client.post("/v1/screenings", json=item)
            assert response.status_code == 202, response.text
        return (len(batch) - 1) / (time.perf_counter() - started)


def batch_rate(base_url: str, batch: list[dict[str, Any]]) -> float:
    body = json.dumps({"items": batch}).encode()
    with httpx2.Client(base_url=base_url, timeout=600) as client:
        client.post("/v1/screenings", json=batch[-1]).raise_for_status()  # warm up
        started = time.perf_counter()
        response = client.post(
            "/v1/batches", content=body, headers={"Content-Type": "application/json"}
        )
        elapsed = time.perf_counter() - started
    assert response.status_code == 202, response.text
    assert response.json()["total"] == len(batch)
    return len(batch) / elapsed


def measure(
    args: argparse.Namespace, database: str, kind: str, workdir: Path
) -> tuple[float, float]:
    pairs = load_pairs(args.data)
    rates = []
    for how, count in ((single_rate, args.singles + 1), (batch_rate, args.batch_items)):
        batch = items(pairs, count, kind)
        best = 0.0
        for _ in range(args.repeat):
            with (
                fresh_database(database, args.postgres_url, workdir) as url,
                serve(url, workdir) as base_url,
            ):
                best = max(best, how(base_url, batch))
        rates.append(best)
    return rates[0], rates[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--singles", type=int, default=300)
    parser.add_argument("--batch-items", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    print(
        f"singles: {args.singles} sequential requests; batch: one request of "
        f"{args.batch_items} items; best of {args.repeat}"
    )
    print(f"{'database':<10} {'items':<9} {'single/s':>9} {'batch/s':>9} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as workdir:
        for database in args.databases.split(","):
            for kind in KINDS:
                single, batch = measure(args, database, kind, Path(workdir))
                ratio = batch / single
                print(f"{database:<10} {kind:<9} {single:9.0f} {batch:9.0f} {ratio:6.1f}x")
    print("target (issue 4): batch ingest >= 20x the single-submit rate")


if __name__ == "__main__":
    main()
