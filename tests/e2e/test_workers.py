"""`faithscreen worker` processes: several sharing a batch on PostgreSQL, one killed
mid-batch, and SIGTERM. The API runs alone (`serve --no-worker`); the test reads the jobs
table to see which worker held what."""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.support.scripted_openai import Hang, ScriptedOpenAI
from tests.support.serve_process import (
    ServeProcess,
    StartServe,
    WorkerProcess,
    db_rows,
    lapse_leases,
    provider_env,
    submit_pair,
    wait_done,
)

pytestmark = pytest.mark.e2e


StartWorker = Callable[[dict[str, str]], WorkerProcess]
ONE_REVIEW_EACH = [("judge", 1), ("translator", 1)]
JOBS = "SELECT screening_id, status, attempts, lease_owner FROM jobs"
# At most this many screenings per worker at once, so one quick worker cannot take all.
CAPACITY = {"FAITHSCREEN_WORKER_CAPACITY": "4"}


@pytest.fixture
def start_worker(database_url: str, tmp_path: Path) -> Iterator[StartWorker]:
    started: list[WorkerProcess] = []
    numbers = itertools.count()  # next() is atomic: workers may be started from threads

    def start(env: dict[str, str]) -> WorkerProcess:
        worker = WorkerProcess(database_url, env, tmp_path / f"worker-{next(numbers)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


def start_together(
    start_serve: StartServe, start_worker: StartWorker, env: dict[str, str], workers: int
) -> tuple[ServeProcess, list[WorkerProcess]]:
    """`serve --no-worker` and `workers` workers, started at once: each process takes a
    second or so to import. (The test database is migrated already.)"""
    with ThreadPoolExecutor(1 + workers) as pool:
        api = pool.submit(start_serve, env, "--no-worker")
        started = list(pool.map(lambda _: start_worker(env), range(workers)))
        return api.result(), started


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)
    return found


def freeze_holding(worker: WorkerProcess, held: Callable[[], list[str]]) -> list[str]:
    """Stop `worker` (SIGSTOP) at a moment it holds jobs, and return them. Seen holding
    jobs, a running worker may finish them before a signal lands; stopped, it cannot, so
    what it holds is read after the stop, and the stop is tried again if that was nothing."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        wait_for(held, "the worker holds jobs")
        worker.process.send_signal(signal.SIGSTOP)
        if jobs := held():
            return jobs
        worker.process.send_signal(signal.SIGCONT)
    raise AssertionError("the worker was never stopped while holding a job")


def jobs_by_screening(database_url: str) -> dict[str, dict[str, Any]]:
    return {row["screening_id"]: row for row in db_rows(database_url, JOBS)}


def check_each_screened_once(client: httpx2.Client, ids: list[str]) -> None:
    """Done, with one outcome, one review per role and no attempt stored twice."""
    for sid in ids:
        body = wait_done(client, sid)
        assert body["outcome"] == "passed", body
        assert sorted((r["role"], r["attempt"]) for r in body["reviews"]) == ONE_REVIEW_EACH


def submit_all(client: httpx2.Client, prefix: str, count: int) -> dict[str, str]:
    """Screening id -> its marker (zero-padded, so no marker contains another)."""
    markers = [f"{prefix}_{i:03d}" for i in range(count)]
    return {submit_pair(client, marker): marker for marker in markers}


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_several_workers_share_a_batch_and_never_run_a_job_twice(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    with ScriptedOpenAI(latency=0.05) as server:
        env = provider_env(server.base_url, **CAPACITY)
        api, workers = start_together(start_serve, start_worker, env, 3)
        with api.client() as client:
            ids = submit_all(client, "shared", 60)
            check_each_screened_once(client, list(ids))
        requests = server.requests
    for marker in ids.values():  # one call per role: no screening ran twice
        asked = sorted(r.model or "" for r in requests if marker in r.text)
        assert asked == ["judge-model", "translator-model"], marker
    jobs = jobs_by_screening(database_url).values()
    assert {(job["status"], job["attempts"]) for job in jobs} == {("done", 1)}
    owners = {job["lease_owner"] for job in jobs}
    assert owners <= {worker.owner for worker in workers}
    assert len(owners) > 1, f"one worker did everything: {owners}"


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_a_killed_worker_s_jobs_are_reclaimed_after_the_lease(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    with ScriptedOpenAI(latency=0.5) as server:
        # A long lease, so the survivor never loses its own on a loaded machine; the test
        # moves time past the dead worker's leases instead of waiting for short ones.
        env = provider_env(server.base_url, FAITHSCREEN_JOB_LEASE_SECONDS="120", **CAPACITY)
        api, (victim, survivor) = start_together(start_serve, start_worker, env, 2)
        with api.client() as client:
            ids = list(submit_all(client, "killed", 20))

            def held_by_victim() -> list[str]:
                jobs = jobs_by_screening(database_url).items()
                return [s for s, j in jobs if (j["status"], j["lease_owner"]) == victim_lease]

            victim_lease = ("running", victim.owner)
            held = freeze_holding(victim, held_by_victim)
            victim.kill()
            assert held == held_by_victim()  # a stopped, then dead, worker changes nothing
            assert lapse_leases(database_url, victim.owner) == len(held)
            check_each_screened_once(client, ids)
    jobs = jobs_by_screening(database_url)
    for sid in held:  # taken over once the lease lapsed, and counted
        assert (jobs[sid]["lease_owner"], jobs[sid]["attempts"]) == (survivor.owner, 2)


def test_sigterm_lets_a_worker_finish_what_it_can_and_release_the_rest(
    database_url: str,
    start_serve: StartServe,
    start_worker: StartWorker,
    scripted_openai: ScriptedOpenAI,
) -> None:
    # The quick call answers 1 s in, leaving 7 s of the grace to store it however loaded
    # the machine; the slow one never answers within the test.
    scripted_openai.script("stop_quick", model="translator-model", steps=[Hang(1)])
    scripted_openai.script("stop_slow", model="translator-model", steps=[Hang(600)])
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_TRANSLATOR_TIMEOUT_SECONDS="900",
        FAITHSCREEN_JOB_LEASE_SECONDS="120",  # a released job is back long before this
        FAITHSCREEN_SHUTDOWN_GRACE_SECONDS="8",
    )
    api, [worker] = start_together(start_serve, start_worker, env, 1)
    with api.client() as client:
        quick, slow = submit_pair(client, "stop_quick"), submit_pair(client, "stop_slow")
        scripted_openai.wait_for_requests(4)
        elapsed = worker.terminate(timeout=60)
        assert worker.process.returncode == 0
        # Generous for a loaded machine, and far below the hang it would otherwise wait out.
        assert elapsed < 45, f"SIGTERM took {elapsed:.1f} s with an 8 s grace"
        jobs = jobs_by_screening(database_url)
        assert (jobs[quick]["status"], jobs[quick]["attempts"]) == ("done", 1)
        released = {"status": "queued", "attempts": 0, "lease_owner": None}
        assert {key: jobs[slow][key] for key in released} == released
        start_worker(env)
        check_each_screened_once(client, [quick, slow])
