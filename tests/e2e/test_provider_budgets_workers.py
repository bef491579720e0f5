"""Provider budgets shared by two real `faithscreen worker` processes (app/budgets), on
SQLite and PostgreSQL, against scripted providers that count what reaches them.

Each limit is checked on what the provider saw (requests per window, calls at once), never
on how long the run took; a budget kept per process would show as twice the limit.
"""

from __future__ import annotations

import itertools
import signal
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from app.db.engine import sync_url
from app.db.types import UTCDateTime
from app.repositories.provider_waits import WAIT_NOTE
from tests.e2e.test_workers import (
    StartWorker,
    check_each_screened_once,
    jobs_by_screening,
    start_together,
    submit_all,
    wait_for,
)
from tests.support.scripted_openai import Hang, HttpError, RecordedRequest, ScriptedOpenAI
from tests.support.serve_process import (
    StartServe,
    WorkerProcess,
    db_rows,
    lapse_leases,
    provider_env,
    submit_pair,
)

pytestmark = pytest.mark.e2e

TRANSLATOR = "translator-model"
LEASES = "SELECT owner FROM provider_budget_leases"
CAPACITY = {"FAITHSCREEN_WORKER_CAPACITY": "4"}


@pytest.fixture
def start_worker(database_url: str, tmp_path: Path) -> Iterator[StartWorker]:
    started: list[WorkerProcess] = []
    numbers = itertools.count()  # next() is atomic: workers are started from threads

    def start(env: dict[str, str]) -> WorkerProcess:
        worker = WorkerProcess(database_url, env, tmp_path / f"worker-{next(numbers)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()


def most_in_any_window(requests: list[RecordedRequest], seconds: float) -> int:
    """The most requests that arrived within any `seconds` of each other."""
    times = sorted(r.time for r in requests)
    return max(sum(1 for t in times[i:] if t < start + seconds) for i, start in enumerate(times))


def translator_calls(server: ScriptedOpenAI) -> list[RecordedRequest]:
    return [r for r in server.requests if r.model == TRANSLATOR]


def sent(server: ScriptedOpenAI, marker: str) -> bool:
    """The translator call for `marker` has arrived: a worker killed before it sent the call
    (its slot already taken) would leave the hanging step to the next worker's call."""
    return any(marker in r.text for r in translator_calls(server))


def test_two_workers_keep_to_one_rate_and_one_in_flight_limit(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    # The translator's budget: 120 requests a minute, one every 0.5 s for both workers
    # together; the judge's: 2 calls at once, each taking 0.3 s at the provider.
    with ScriptedOpenAI() as translator, ScriptedOpenAI(latency=0.3) as judge:
        env = provider_env(
            translator.base_url,
            FAITHSCREEN_JUDGE_BASE_URL=judge.base_url,
            FAITHSCREEN_TRANSLATOR_REQUESTS_PER_MINUTE="120",
            FAITHSCREEN_JUDGE_MAX_IN_FLIGHT="2",
            **CAPACITY,
        )
        api, workers = start_together(start_serve, start_worker, env, 2)
        with api.client() as client:
            ids = list(submit_all(client, "budget", 24))
            check_each_screened_once(client, ids)
        # Within any 6 s: 12 requests at one per 0.5 s, and the window's first, 13; and up
        # to 3 more, sent up to 1.5 s after their reserved starts by a worker the loaded
        # machine held up. A budget per worker lets through twice the rate: about 24.
        assert most_in_any_window(translator_calls(translator), 6.0) <= 16
        assert judge.max_in_flight == 2
    owners = {job["lease_owner"] for job in jobs_by_screening(database_url).values()}
    assert owners == {worker.owner for worker in workers}, "both workers took jobs"
    assert db_rows(database_url, LEASES) == []


def deferred(database_url: str, screening_id: str) -> dict[str, Any] | None:
    job = jobs_by_screening(database_url)[screening_id]
    waiting = job["status"] == "queued" and job["lease_owner"] is None
    rows = db_rows(
        database_url, "SELECT last_error FROM jobs WHERE screening_id = :s", s=screening_id
    )
    note = rows[0]["last_error"] or ""
    return job if waiting and note.startswith(WAIT_NOTE) else None


def test_a_retry_after_one_worker_got_pauses_the_provider_for_the_other(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    with ScriptedOpenAI() as server:
        # The first translator call is told to wait an hour: capped at 300 s, longer than
        # a call waits, so its screening is put back, and the pause is stored for everyone.
        server.script(model=TRANSLATOR, steps=[HttpError(429, headers={"Retry-After": "3600"})])
        env = provider_env(server.base_url, **CAPACITY)
        api, workers = start_together(start_serve, start_worker, env, 2)
        with api.client() as client:
            first = submit_pair(client, "paused_first")
            wait_for(lambda: deferred(database_url, first), "the first screening waits")
            [told] = [w for w in workers if f"screening {first}: " in w.log.read_text()]
            told.terminate()  # only the worker that never heard from the provider is left
            [other] = [w for w in workers if w is not told]
            second = submit_pair(client, "paused_second")
            wait_for(lambda: deferred(database_url, second), "the second screening waits")
        # The other worker put it back without asking the provider: the one 429 was all.
        assert len(translator_calls(server)) == 1
        assert f"screening {second}: {WAIT_NOTE}" in other.log.read_text()


def lapse_budget_leases(database_url: str, owner: str) -> int:
    """What time does to a dead worker's in-flight leases, as `lapse_leases` does to its
    jobs: their expiry set an hour back (a live worker's own leases are left alone)."""
    engine = sa.create_engine(sync_url(database_url), poolclass=sa.NullPool)
    past = sa.bindparam("past", datetime.now(UTC) - timedelta(hours=1), type_=UTCDateTime())
    query = sa.text("UPDATE provider_budget_leases SET expires_at = :past WHERE owner = :owner")
    try:
        with engine.begin() as connection:
            return connection.execute(query.bindparams(past), {"owner": owner}).rowcount
    finally:
        engine.dispose()


def test_a_killed_worker_s_in_flight_slot_is_reclaimed(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    with ScriptedOpenAI() as server:
        # One translator call at a time; the first one never gets an answer.
        server.script("leak_first", model=TRANSLATOR, steps=[Hang(600)])
        env = provider_env(
            server.base_url,
            FAITHSCREEN_TRANSLATOR_MAX_IN_FLIGHT="1",
            FAITHSCREEN_TRANSLATOR_TIMEOUT_SECONDS="900",
            FAITHSCREEN_JOB_LEASE_SECONDS="120",
            **CAPACITY,
        )
        api, workers = start_together(start_serve, start_worker, env, 2)
        with api.client() as client:
            hung = submit_pair(client, "leak_first")
            held: Callable[[], list[dict[str, Any]]] = lambda: db_rows(database_url, LEASES)  # noqa: E731
            [lease] = wait_for(held, "the hung call holds the translator's one slot")
            wait_for(lambda: sent(server, "leak_first"), "the hung call reached the provider")
            [victim] = [w for w in workers if w.owner == lease["owner"]]
            victim.process.send_signal(signal.SIGKILL)
            victim.process.wait()
            rest = list(submit_all(client, "leak_rest", 3))
            assert db_rows(database_url, LEASES) == [lease]  # the dead worker's slot stays
            assert lapse_budget_leases(database_url, victim.owner) == 1
            assert lapse_leases(database_url, victim.owner) == 1
            check_each_screened_once(client, [hung, *rest])
    assert db_rows(database_url, LEASES) == []


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_on_sqlite_a_starting_worker_frees_a_dead_one_s_slot_at_once(
    database_url: str, start_serve: StartServe, start_worker: StartWorker
) -> None:
    # A SQLite file is local: a worker starting up can tell the dead worker is gone (as
    # for its jobs, app/worker/owners.py) and need not wait for its lease's 15 minutes.
    with ScriptedOpenAI() as server:
        server.script("dead_slot", model=TRANSLATOR, steps=[Hang(600)])
        env = provider_env(
            server.base_url,
            FAITHSCREEN_TRANSLATOR_MAX_IN_FLIGHT="1",
            FAITHSCREEN_TRANSLATOR_TIMEOUT_SECONDS="900",
            FAITHSCREEN_JOB_LEASE_SECONDS="120",
        )
        api, [victim] = start_together(start_serve, start_worker, env, 1)
        with api.client() as client:
            hung = submit_pair(client, "dead_slot")
            [lease] = wait_for(lambda: db_rows(database_url, LEASES), "the hung call's slot")
            wait_for(lambda: sent(server, "dead_slot"), "the hung call reached the provider")
            assert lease["owner"] == victim.owner
            victim.kill()
            start_worker(env)
            check_each_screened_once(client, [hung])
    assert db_rows(database_url, LEASES) == []
