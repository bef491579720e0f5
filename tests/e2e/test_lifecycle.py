"""A `faithscreen serve` process's life: restarts, SIGTERM, a crash, the database going away.

Real processes, a scripted provider on loopback, SQLite and PostgreSQL. A translator call
that must stay in flight is scripted to hang, with a read timeout longer than the hang.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Self

import httpx2
import pytest
from sqlalchemy.engine import make_url

from tests.support.scripted_openai import Hang, ScriptedOpenAI
from tests.support.serve_process import (
    ServeProcess,
    StartServe,
    db_rows,
    lapse_leases,
    provider_env,
    submit_pair,
    wait_done,
)

pytestmark = pytest.mark.e2e


TRANSLATOR, JUDGE = "translator-model", "judge-model"
# A provider that never answers within a test (it is cut off when the test ends), and a
# read timeout longer still: the call stays in flight however slowly the test acts on it.
NEVER = 600
HANG_ENV = {"FAITHSCREEN_TRANSLATOR_TIMEOUT_SECONDS": "900"}
ONE_REVIEW_EACH = [("judge", 1), ("translator", 1)]


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def reviews_of(body: dict[str, Any]) -> list[tuple[str, int]]:
    return sorted((r["role"], r["attempt"]) for r in body["reviews"])


def asked(server: ScriptedOpenAI, marker: str, model: str) -> int:
    return sum(1 for r in server.requests if marker in r.text and r.model == model)


def job_of(database_url: str, screening_id: str) -> dict[str, Any]:
    query = "SELECT status, attempts, lease_owner FROM jobs WHERE screening_id = :id"
    [row] = db_rows(database_url, query, id=screening_id)
    return row


def judge_stored(client: httpx2.Client, screening_id: str) -> Callable[[], bool]:
    def check() -> bool:
        body = client.get(f"/v1/screenings/{screening_id}").json()
        return [r["role"] for r in body["reviews"]] == ["judge"]

    return check


def test_queued_screenings_survive_a_restart(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    env = provider_env(scripted_openai.base_url)
    api_only = start_serve(env, "--no-worker")
    with api_only.client() as client:
        ids = [submit_pair(client, f"restart_{i}") for i in range(4)]
        statuses = {client.get(f"/v1/screenings/{sid}").json()["status"] for sid in ids}
    assert statuses == {"queued"}
    api_only.terminate()
    assert api_only.process.returncode == 0
    assert scripted_openai.requests == []

    with start_serve(env).client() as client:
        done = [wait_done(client, sid) for sid in ids]
    assert [body["outcome"] for body in done] == ["passed"] * len(ids)
    assert all(reviews_of(body) == ONE_REVIEW_EACH for body in done)


def test_sigterm_stops_within_the_grace_and_releases_the_job(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, database_url: str
) -> None:
    scripted_openai.script("sigterm_hang", model=TRANSLATOR, steps=[Hang(NEVER)])
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_SHUTDOWN_GRACE_SECONDS="2",
        # Far beyond the test's deadlines: the job comes back because it was released.
        FAITHSCREEN_JOB_LEASE_SECONDS="120",
        **HANG_ENV,
    )
    serve = start_serve(env)
    with serve.client() as client:
        sid = submit_pair(client, "sigterm_hang")
        scripted_openai.wait_for_requests(2)
        wait_for(judge_stored(client, sid), "the judge's review is stored")
    elapsed = serve.terminate(timeout=60)
    assert serve.process.returncode == 0
    # Generous for a loaded machine, and far below the hang it would otherwise wait out.
    assert elapsed < 45, f"SIGTERM took {elapsed:.1f} s with a 2 s grace"
    assert job_of(database_url, sid) == {"status": "queued", "attempts": 0, "lease_owner": None}

    with start_serve(env).client() as client:
        body = wait_done(client, sid)
    assert body["outcome"] == "passed"
    assert reviews_of(body) == ONE_REVIEW_EACH
    assert asked(scripted_openai, "sigterm_hang", JUDGE) == 1  # its stored review was reused
    assert asked(scripted_openai, "sigterm_hang", TRANSLATOR) == 2


def test_a_killed_serve_is_recovered_without_repeating_stored_calls(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, database_url: str
) -> None:
    # Leases are long, so no live process loses its own on a loaded machine. On SQLite a
    # starting worker frees a dead local process's jobs at once: completing in time shows
    # that early recovery. On PostgreSQL the lease decides: the test moves time past the
    # dead process's lease rather than waiting for a short one to lapse.
    scripted_openai.script("crash_hang", model=TRANSLATOR, steps=[Hang(NEVER)])
    env = provider_env(scripted_openai.base_url, **HANG_ENV, FAITHSCREEN_JOB_LEASE_SECONDS="120")
    crashed = start_serve(env)
    with crashed.client() as client:
        sid = submit_pair(client, "crash_hang")
        wait_for(judge_stored(client, sid), "the judge's review is stored")
        wait_for(lambda: asked(scripted_openai, "crash_hang", TRANSLATOR) == 1, "translator asked")
    crashed.kill()
    if not database_url.startswith("sqlite"):
        assert lapse_leases(database_url, job_of(database_url, sid)["lease_owner"]) == 1

    with start_serve(env).client() as client:
        body = wait_done(client, sid)
    assert body["outcome"] == "passed"
    assert reviews_of(body) == ONE_REVIEW_EACH
    assert asked(scripted_openai, "crash_hang", JUDGE) == 1
    assert asked(scripted_openai, "crash_hang", TRANSLATOR) == 2
    job = job_of(database_url, sid)
    assert (job["status"], job["attempts"]) == ("done", 2)  # the crashed run counts


# --- The database going away ------------------------------------------------------------------


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


class TcpProxy:
    """A loopback TCP proxy to (host, port), in a thread. Every change of mode drops the
    connections it holds; then `refuse()` stops listening (a database that is down),
    `ignore()` accepts connections and never answers (a host that drops packets), and
    `forward()` listens on the same port again and forwards."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self.port = 0
        self._forwarding = True
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[Any]] = set()

    def __enter__(self) -> Self:
        self._thread.start()
        self.forward()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.refuse()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=60)
        self._loop.close()

    def forward(self) -> None:
        self._run(self._switch(listen=True, forward=True))

    def refuse(self) -> None:
        self._run(self._switch(listen=False, forward=False))

    def ignore(self) -> None:
        self._run(self._switch(listen=True, forward=False))

    def _run(self, step: Coroutine[Any, Any, None]) -> None:
        asyncio.run_coroutine_threadsafe(step, self._loop).result(timeout=60)

    async def _switch(self, *, listen: bool, forward: bool) -> None:
        for task in self._pipes:
            task.cancel()
        await asyncio.gather(*self._pipes, return_exceptions=True)
        self._forwarding = forward
        if not listen and self._server is not None:
            self._server.close()
            self._server = None
        if listen and self._server is None:
            self._server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)
            self.port = self._server.sockets[0].getsockname()[1]

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._pipes.add(task)
        try:
            if not self._forwarding:
                await asyncio.Event().wait()  # until the next switch cancels it
            upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
            try:
                await asyncio.gather(_pump(reader, upstream_writer), _pump(upstream_reader, writer))
            finally:
                upstream_writer.transport.abort()
        except (OSError, asyncio.CancelledError):
            pass  # switched, or one side went away; ending normally keeps 3.11's streams quiet
        finally:
            writer.transport.abort()
            self._pipes.discard(task)


def worker_complained(log: Path, screening_ids: list[str]) -> bool:
    """The worker has logged a warning or error about each of these screenings."""
    lines = [
        line
        for line in log.read_text().splitlines()
        if "faithscreen.worker" in line and ("WARNING" in line or "ERROR" in line)
    ]
    return all(any(sid in line for line in lines) for sid in screening_ids)


@pytest.mark.postgres
@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
@pytest.mark.parametrize("outage", ["refuse", "ignore"])
def test_a_database_outage_answers_503_and_loses_nothing(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path, outage: str
) -> None:
    markers = [f"outage_{i}" for i in range(4)]
    for marker in markers:  # both calls in flight when the database goes away
        # Long enough that the test has cut the database off before they answer, however
        # slowly a loaded machine runs it; the 503 check below waits about as long anyway.
        scripted_openai.script(marker, steps=[Hang(5), Hang(5)])
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_JOB_LEASE_SECONDS="120",
        FAITHSCREEN_TRANSLATOR_TIMEOUT_SECONDS="30",
        FAITHSCREEN_JUDGE_TIMEOUT_SECONDS="30",
    )
    target = make_url(database_url)
    with TcpProxy(target.host or "127.0.0.1", target.port or 5432) as proxy:
        proxied = target.set(host="127.0.0.1", port=proxy.port)
        serve = ServeProcess(proxied.render_as_string(hide_password=False), env, tmp_path / "log")
        try:
            with serve.client() as client:
                ids = [submit_pair(client, marker) for marker in markers]
                scripted_openai.wait_for_requests(2 * len(markers))
                getattr(proxy, outage)()
                # An unanswered connection gives up after the engine's connect timeout (5 s).
                assert_unavailable(client.get(f"/v1/screenings/{ids[0]}", timeout=15))
                # The calls return into the outage: their reviews cannot be stored.
                wait_for(lambda: worker_complained(serve.log, ids), "the worker logs the outage")
                proxy.forward()
                # The lease (120 s) is far off: the worker itself must try again.
                done = [wait_done(client, sid) for sid in ids]
        finally:
            serve.kill()
    assert [body["outcome"] for body in done] == ["passed"] * len(ids)
    assert all(reviews_of(body) == ONE_REVIEW_EACH for body in done)


def assert_unavailable(response: httpx2.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "database_unavailable"
