"""`faithscreen serve` and auth, through real processes: FAITHSCREEN_AUTH=off refused
beyond loopback, and the first admin key printed once on a fresh database."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.serve_process import FAITHSCREEN, StartServe, db_rows, free_port

pytestmark = pytest.mark.one_database("sqlite")

FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.org"])
def test_serve_refuses_auth_off_beyond_loopback(tmp_path: Path, host: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env |= {"FAITHSCREEN_AUTH": "off", "FAITHSCREEN_DATABASE_URL": f"sqlite:///{tmp_path}/x.db"}
    command = [FAITHSCREEN, "serve", "--host", host, "--port", str(free_port())]
    done = subprocess.run(
        command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=180
    )
    assert done.returncode != 0
    assert "FAITHSCREEN_AUTH=off" in done.stderr and "loopback" in done.stderr, done.stderr
    assert not (tmp_path / "x.db").exists()  # refused before touching anything


def test_the_first_start_prints_an_admin_key_once(
    start_serve: StartServe, database_url: str
) -> None:
    first = start_serve({"FAITHSCREEN_AUTH": "on"})
    found = FIRST_KEY.findall(first.log.read_text())
    assert len(found) == 1, first.log.read_text()
    key = found[0]
    with first.client() as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/v1/keys").status_code == 401
        listed = client.get("/v1/keys", headers={"Authorization": f"Bearer {key}"})
        assert listed.status_code == 200, listed.text
        assert [(k["name"], k["role"]) for k in listed.json()] == [("admin", "admin")]
    first.terminate()
    again = start_serve({"FAITHSCREEN_AUTH": "on"})
    assert len(FIRST_KEY.findall(again.log.read_text())) == 1  # the same log: no second key
    rows = db_rows(database_url, "SELECT name, key_hash FROM api_keys")
    assert [row["name"] for row in rows] == ["admin"]
    assert key not in str(rows)


def test_with_auth_off_no_key_is_made_and_loopback_callers_are_admins(
    start_serve: StartServe, database_url: str
) -> None:
    server = start_serve({})  # the harness default: FAITHSCREEN_AUTH=off on 127.0.0.1
    assert not FIRST_KEY.search(server.log.read_text())
    with server.client() as client:
        assert client.get("/v1/keys").json() == []
    assert db_rows(database_url, "SELECT name FROM api_keys") == []


def test_with_auth_off_a_request_for_another_host_is_refused(start_serve: StartServe) -> None:
    """DNS rebinding: a browser sent to 127.0.0.1 by a page of attacker.example says
    `Host: attacker.example`; the real server refuses it, and its own name still works."""
    server = start_serve({})  # FAITHSCREEN_AUTH=off on 127.0.0.1
    with server.client() as client:
        rebound = client.post(
            "/v1/keys",
            json={"name": "rebound", "role": "admin"},
            headers={"Host": "attacker.example", "Origin": "http://attacker.example"},
        )
        assert rebound.status_code == 403, rebound.text
        assert rebound.json()["error"]["code"] == "host_not_loopback"
        assert client.get("/review", headers={"Host": "attacker.example"}).status_code == 403
        from_page = client.get("/v1/keys", headers={"Origin": "http://attacker.example"})
        assert from_page.json()["error"]["code"] == "origin_not_loopback"
        assert client.get("/v1/keys").json() == []  # Host 127.0.0.1:PORT; nothing created
        assert client.get("/v1/keys", headers={"Host": "localhost"}).status_code == 200
