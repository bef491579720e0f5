"""API keys: shown once, stored only as a hash, listed without the key, revoked for good;
`last_used_at` written at most once a minute; the `faithscreen keys` commands (run as real
subprocesses on the test database) working with a running API."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.auth import service
from app.auth.keys import generate_key, well_formed
from app.cli.keys import is_loopback
from app.clock import utcnow
from app.models import ApiKey
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import bearer, error_code, make_key
from tests.support.serve_process import FAITHSCREEN


@pytest.fixture
async def auth_api(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Api]:
    settings = unconfigured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as api:
        yield api


async def stored_keys(api: Api) -> list[ApiKey]:
    async with api.runtime.sessions() as session:
        return list((await session.execute(select(ApiKey).order_by(ApiKey.id))).scalars())


def test_keys_are_random_and_shaped_alike() -> None:
    keys = {generate_key() for _ in range(100)}
    assert len(keys) == 100
    assert all(key.startswith("fs_") and len(key) == 46 and well_formed(key) for key in keys)
    assert not well_formed("fs_" + "a" * 42) and not well_formed("xx_" + "a" * 43)


async def test_a_created_key_is_shown_once_and_stored_only_as_its_hash(auth_api: Api) -> None:
    admin = await make_key(auth_api, "admin", "root")
    response = await auth_api.client.post(
        "/v1/keys", json={"name": "alice", "role": "reviewer"}, headers=bearer(admin)
    )
    assert response.status_code == 201, response.text
    created = response.json()
    key = created["key"]
    assert (created["name"], created["role"], created["prefix"]) == ("alice", "reviewer", key[:10])
    row = next(k for k in await stored_keys(auth_api) if k.name == "alice")
    assert row.key_hash == hashlib.sha256(key.encode()).hexdigest()
    columns = [getattr(row, c.key) for c in ApiKey.__table__.columns]
    assert not any(key in str(value) for value in columns)
    listed = await auth_api.client.get("/v1/keys", headers=bearer(admin))
    assert key not in listed.text and "key" not in listed.json()[1]
    assert [k["name"] for k in listed.json()] == ["root", "alice"]
    # The new key works, with its role.
    assert (await auth_api.client.get("/v1/queue", headers=bearer(key))).status_code == 200
    assert (await auth_api.client.get("/v1/keys", headers=bearer(key))).status_code == 403


async def test_a_revoked_key_is_refused_and_stays_listed(auth_api: Api) -> None:
    admin = await make_key(auth_api, "admin", "root")
    key = await make_key(auth_api, "submitter", "bot")
    assert (await auth_api.client.get("/v1/screenings", headers=bearer(key))).status_code == 200
    response = await auth_api.client.delete("/v1/keys/bot", headers=bearer(admin))
    assert response.status_code == 200 and response.json()["revoked_at"], response.text
    assert error_code(await auth_api.client.get("/v1/screenings", headers=bearer(key)), 401)
    listed = (await auth_api.client.get("/v1/keys", headers=bearer(admin))).json()
    assert [(k["name"], bool(k["revoked_at"])) for k in listed] == [("root", False), ("bot", True)]
    again = await auth_api.client.delete("/v1/keys/bot", headers=bearer(admin))
    assert again.json()["revoked_at"] == response.json()["revoked_at"]
    assert error_code(await auth_api.client.delete("/v1/keys/nobody", headers=bearer(admin)), 404)


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("root", 409, "key_name_taken"),
        ("anonymous", 422, "invalid_key_name"),
        ("has space", 422, "invalid_key_name"),
        ("", 422, "invalid_key_name"),
    ],
)
async def test_a_key_name_is_valid_and_never_reused(
    auth_api: Api, name: str, status: int, code: str
) -> None:
    admin = await make_key(auth_api, "admin", "root")
    body = {"name": name, "role": "submitter"}
    response = await auth_api.client.post("/v1/keys", json=body, headers=bearer(admin))
    assert error_code(response, status) == code
    assert len(await stored_keys(auth_api)) == 1


async def test_last_used_is_written_at_most_once_a_minute(auth_api: Api) -> None:
    key = await make_key(auth_api, "submitter", "bot")
    start = utcnow()
    moments = [start, start + timedelta(seconds=30), start + timedelta(seconds=61)]
    async with auth_api.runtime.sessions() as session:
        for now in moments:
            assert await service.principal_for(session, key, now=now) is not None
            await session.commit()
    (row,) = await stored_keys(auth_api)
    assert row.last_used_at == moments[2]
    # Through the API too: the first request of a new key sets it.
    fresh = await make_key(auth_api, "submitter", "fresh")
    await auth_api.client.get("/v1/screenings", headers=bearer(fresh))
    assert next(k for k in await stored_keys(auth_api) if k.name == "fresh").last_used_at


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


# ---- The `faithscreen keys` commands ---------------------------------------------------------


def keys_command(database_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env["FAITHSCREEN_DATABASE_URL"] = database_url
    return subprocess.run(
        [FAITHSCREEN, "keys", *args], env=env, capture_output=True, text=True, timeout=120
    )


async def test_the_keys_commands_create_list_and_revoke(auth_api: Api) -> None:
    url = auth_api.settings.database_url
    done = keys_command(url, "create", "--role", "reviewer", "--name", "carol")
    assert done.returncode == 0, done.stderr
    key = done.stdout.strip().splitlines()[-1]
    assert well_formed(key)
    assert (await auth_api.client.get("/v1/queue", headers=bearer(key))).status_code == 200

    listing = keys_command(url, "list")
    assert listing.returncode == 0, listing.stderr
    line = next(line for line in listing.stdout.splitlines() if line.startswith("carol"))
    assert line.split()[:3] == ["carol", "reviewer", key[:10]]
    assert key not in listing.stdout and key[10:20] not in listing.stdout

    revoked = keys_command(url, "revoke", "carol")
    assert revoked.returncode == 0, revoked.stderr
    assert error_code(await auth_api.client.get("/v1/queue", headers=bearer(key)), 401)


async def test_the_keys_commands_refuse_clearly(auth_api: Api) -> None:
    url = auth_api.settings.database_url
    assert keys_command(url, "create", "--role", "admin", "--name", "dave").returncode == 0
    again = keys_command(url, "create", "--role", "admin", "--name", "dave")
    assert again.returncode == 1 and "dave" in again.stderr and not again.stdout
    unknown = keys_command(url, "revoke", "nobody")
    assert unknown.returncode == 1 and "nobody" in unknown.stderr
    bad_role = keys_command(url, "create", "--role", "owner", "--name", "erin")
    assert bad_role.returncode == 2
    assert [k.name for k in await stored_keys(auth_api)] == ["dave"]
