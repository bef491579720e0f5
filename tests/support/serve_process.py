"""A real `faithscreen serve` process for end-to-end tests, and polling helpers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import sqlalchemy as sa

from app.db.engine import sync_url
from app.db.types import UTCDateTime

FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def provider_env(base_url: str, **overrides: str) -> dict[str, str]:
    """Both roles pointed at one OpenAI-compatible server. The timeouts are generous: the
    scripted server answers at once, so on a loaded machine a short timeout would cut off
    answers that were on their way. A test of a timeout sets a short one, and a provider
    that never answers, itself (test_screening_paths.py)."""
    env = {
        "FAITHSCREEN_TRANSLATOR_BASE_URL": base_url,
        "FAITHSCREEN_TRANSLATOR_MODEL": "translator-model",
        "FAITHSCREEN_TRANSLATOR_API_KEY": "sk-test-translator",
        "FAITHSCREEN_JUDGE_BASE_URL": base_url,
        "FAITHSCREEN_JUDGE_MODEL": "judge-model",
    }
    for role in ("TRANSLATOR", "JUDGE"):
        env[f"FAITHSCREEN_{role}_TIMEOUT_SECONDS"] = "30"
        env[f"FAITHSCREEN_{role}_CONNECT_TIMEOUT_SECONDS"] = "10"
        env[f"FAITHSCREEN_{role}_MAX_TOKENS"] = "512"
    env.update(overrides)
    return env


class _ServiceProcess:
    """A `faithscreen` process writing to `log`: stopped as the service is stopped."""

    name = "faithscreen"
    process: subprocess.Popen[bytes]
    log: Path

    def terminate(self, timeout: float = 30) -> float:
        """SIGTERM, then wait; returns how long the process took to exit."""
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                log = self.log.read_text()
                raise AssertionError(f"{self.name} ignored SIGTERM:\n{log}") from None
        return time.monotonic() - started

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


PORT_TRIES = 5
# What serve prints when its port is taken, and what uvicorn logs once the app is up.
PORT_TAKEN = "is in use"
STARTED = "Application startup complete"


class ServeProcess(_ServiceProcess):
    """`faithscreen serve` on a free loopback port; its output goes to a log file."""

    name = "serve"

    def __init__(self, database_url: str, env: Mapping[str, str], log: Path, *args: str) -> None:
        self.log = log
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
        # Auth off unless the caller says otherwise: these tests bind to loopback, and keys
        # and roles have tests of their own (tests/e2e/test_auth_serve.py).
        defaults = {"FAITHSCREEN_DATABASE_URL": database_url, "FAITHSCREEN_AUTH": "off"}
        full_env.update({**defaults, **env})
        # A port free when picked can be taken before serve binds it (by another test process,
        # or another suite on the same machine): serve then exits, and a new port is tried.
        for _ in range(PORT_TRIES):
            if self._start(full_env, args):
                return
        raise AssertionError(f"serve found no free port in {PORT_TRIES} tries:\n{log.read_text()}")

    def _start(self, env: dict[str, str], args: tuple[str, ...]) -> bool:
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        command = [FAITHSCREEN, "serve", "--host", "127.0.0.1", "--port", str(self.port), *args]
        self._log_start = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=self.log.parent
            )
        try:
            # Generous: a shared CI machine under load takes long to import and migrate.
            return self._wait_healthy(deadline=time.monotonic() + 180)
        except AssertionError:
            self.kill()  # no caller holds it yet to stop it
            raise

    def _own_log(self) -> str:
        """What this start of serve wrote (a log may hold an earlier process's lines)."""
        with self.log.open("rb") as log:
            log.seek(self._log_start)
            return log.read().decode(errors="replace")

    def _wait_healthy(self, deadline: float) -> bool:
        """True once this process answers /healthz; False if its port was taken."""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                if PORT_TAKEN in self._own_log():
                    return False
                raise AssertionError(f"serve exited early:\n{self.log.read_text()}")
            # Another process on the port answers /healthz too: only a started app of our
            # own (its log says so) counts.
            if STARTED in self._own_log() and self._answers():
                return True
            time.sleep(0.1)
        raise AssertionError(f"serve did not become healthy:\n{self.log.read_text()}")

    def _answers(self) -> bool:
        try:
            return httpx2.get(f"{self.base_url}/healthz", timeout=1).status_code == 200
        except httpx2.TransportError:
            return False

    def client(self) -> httpx2.Client:
        return httpx2.Client(base_url=self.base_url, timeout=30)


def wait_done(client: httpx2.Client, screening_id: str, timeout: float = 120) -> dict[str, Any]:
    """Poll a screening until its status is `done`; fail with the last body otherwise."""
    deadline = time.monotonic() + timeout
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        response = client.get(f"/v1/screenings/{screening_id}")
        assert response.status_code == 200, response.text
        body = response.json()
        if body["status"] == "done":
            return body
        time.sleep(0.1)
    raise AssertionError(f"screening {screening_id} not done in {timeout}s: {body}")


class WorkerProcess(_ServiceProcess):
    """`faithscreen worker` (no HTTP port); its output goes to `log`. Ready once it has
    logged its start; `owner` is the name it holds leases under."""

    name = "worker"

    def __init__(self, database_url: str, env: Mapping[str, str], log: Path) -> None:
        self.log = log
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
        full_env.update({"FAITHSCREEN_DATABASE_URL": database_url, **env})
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [FAITHSCREEN, "worker"],
                env=full_env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=log.parent,
            )
        # As generous as serve's: a loaded machine takes long to import and connect.
        self.owner = self._wait_started(deadline=time.monotonic() + 180)

    def _wait_started(self, deadline: float) -> str:
        while time.monotonic() < deadline:
            for line in self.log.read_text().splitlines():
                if f":{self.process.pid}:" in line and line.endswith(" started"):
                    return line.split(" worker ")[-1].removesuffix(" started")
            if self.process.poll() is not None:
                raise AssertionError(f"worker exited early:\n{self.log.read_text()}")
            time.sleep(0.05)
        raise AssertionError(f"worker did not start:\n{self.log.read_text()}")


def db_rows(database_url: str, query: str, **params: Any) -> list[dict[str, Any]]:
    """Rows of a read-only SQL query, straight from the database a process works on."""
    engine = sa.create_engine(sync_url(database_url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            return [dict(row._mapping) for row in connection.execute(sa.text(query), params)]
    finally:
        engine.dispose()


def lapse_leases(database_url: str, owner: str) -> int:
    """Move time past the lease of every running job `owner` holds (a process's clock
    cannot be moved from here, so the leases are set an hour back): what a short lease
    would do after a while, without a live process's own short lease lapsing on a loaded
    machine. Returns how many."""
    engine = sa.create_engine(sync_url(database_url), poolclass=sa.NullPool)
    past = sa.bindparam("past", datetime.now(UTC) - timedelta(hours=1), type_=UTCDateTime())
    query = sa.text(
        "UPDATE jobs SET lease_expires_at = :past WHERE lease_owner = :owner AND status = 'running'"
    )
    try:
        with engine.begin() as connection:
            return connection.execute(query.bindparams(past), {"owner": owner}).rowcount
    finally:
        engine.dispose()


def submit_pair(client: httpx2.Client, marker: str) -> str:
    """Queue a pair whose Lean statement carries `marker` (for scripted rules to match)."""
    body = {
        "informal": "For every natural number n, n + 0 = n.",
        "formal": f"theorem {marker} (n : ℕ) : n + 0 = n := by sorry",
        "external_id": marker,
    }
    response = client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


# The `start_serve` fixture (tests/e2e/conftest.py): start(env, *args) -> a running serve.
StartServe = Callable[..., ServeProcess]
