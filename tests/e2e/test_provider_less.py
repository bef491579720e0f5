"""A process without a provider for every role takes no screening job: real `faithscreen
serve` and `faithscreen worker` processes on one database, SQLite and PostgreSQL.

The README's first hour: a provider-less `faithscreen serve` still running, then a second
`faithscreen serve --port 8001` with provider variables. Every pair submitted to the
second must be screened by the second, none recorded as a provider error by the first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import ServeProcess, db_rows, provider_env, submit_pair

pytestmark = pytest.mark.e2e

PAIRS = 24
PROVIDER_VARIABLES = [
    "FAITHSCREEN_TRANSLATOR_BASE_URL",
    "FAITHSCREEN_TRANSLATOR_MODEL",
    "FAITHSCREEN_JUDGE_BASE_URL",
    "FAITHSCREEN_JUDGE_MODEL",
]
NO_WORKER = "no worker runs in this process"
Body = dict[str, Any]


@pytest.fixture
def processes() -> Iterator[list[ServeProcess]]:
    started: list[ServeProcess] = []
    yield started
    for process in started:
        process.kill()


def wait_all_done(client: httpx2.Client, ids: list[str], timeout: float = 120) -> list[Body]:
    deadline = time.monotonic() + timeout
    while True:
        bodies = [client.get(f"/v1/screenings/{sid}").json() for sid in ids]
        if all(body["status"] == "done" for body in bodies):
            return bodies
        if time.monotonic() > deadline:
            waiting = [b["id"] for b in bodies if b["status"] != "done"]
            raise AssertionError(f"not done in {timeout} s: {waiting}")
        time.sleep(0.2)


def test_a_provider_less_serve_takes_no_job_and_the_configured_one_screens_them_all(
    database_url: str, processes: list[ServeProcess], tmp_path: Path
) -> None:
    bare = ServeProcess(database_url, {}, tmp_path / "bare.log")
    processes.append(bare)
    # Slow replies and two screenings at a time: the configured worker leaves queued jobs
    # for long enough that a provider-less worker polling the same queue would take some.
    with ScriptedOpenAI(latency=0.1) as server:
        env = provider_env(server.base_url, FAITHSCREEN_WORKER_CAPACITY="2")
        configured = ServeProcess(database_url, env, tmp_path / "configured.log")
        processes.append(configured)
        with configured.client() as client:
            ids = [submit_pair(client, f"two_servers_{i:03d}") for i in range(PAIRS)]
            bodies = wait_all_done(client, ids)
    for body in bodies:
        assert body["outcome"] == "passed", body
        assert not any(r["parse_status"] == "provider_error" for r in body["reviews"]), body
    owners = {row["lease_owner"] for row in db_rows(database_url, "SELECT lease_owner FROM jobs")}
    assert not any(f":{bare.process.pid}:" in owner for owner in owners), owners

    # The provider-less process said once, at start, what would let it work.
    said = [line for line in bare.log.read_text().splitlines() if NO_WORKER in line]
    assert len(said) == 1, bare.log.read_text()
    for variable in PROVIDER_VARIABLES:
        assert variable in said[0]
    assert NO_WORKER not in configured.log.read_text()


def test_readyz_says_what_each_process_has(
    database_url: str, processes: list[ServeProcess], tmp_path: Path
) -> None:
    env = provider_env("http://127.0.0.1:9/v1")
    kinds = {"bare": ({}, ()), "api": (env, ("--no-worker",)), "full": (env, ())}

    def start(kind: str) -> ServeProcess:
        kind_env, args = kinds[kind]
        process = ServeProcess(database_url, kind_env, tmp_path / f"{kind}.log", *args)
        processes.append(process)
        return process

    # At once: each takes a second or more to import (the database is migrated already).
    with ThreadPoolExecutor(len(kinds)) as pool:
        bare, api_only, full = pool.map(start, kinds)
    missing = {"translator": "missing", "judge": "missing"}
    configured = {"translator": "configured", "judge": "configured"}
    expected = {
        bare: {"providers": missing, "worker": "none"},
        api_only: {"providers": configured, "worker": "none"},
        full: {"providers": configured, "worker": "running"},
    }
    for process, says in expected.items():
        with process.client() as client:
            response = client.get("/readyz")
        assert response.status_code == 200, response.text
        assert response.json() == {"status": "ready", "problems": []} | says


def test_a_worker_without_providers_refuses_to_start(database_url: str) -> None:
    judge_only = {
        "FAITHSCREEN_DATABASE_URL": database_url,
        "FAITHSCREEN_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
        "FAITHSCREEN_JUDGE_MODEL": "judge-model",
    }
    done = faithscreen(judge_only, "worker", timeout=180)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert "FAITHSCREEN_TRANSLATOR_BASE_URL, FAITHSCREEN_TRANSLATOR_MODEL" in line
    assert "FAITHSCREEN_JUDGE" not in line
    assert db_rows(database_url, "SELECT lease_owner FROM jobs") == []
