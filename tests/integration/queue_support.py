"""Shared by the test_auth_* and test_queue_* files: an in-process API with auth on, keys
made through the real key service, and pairs whose supplied replies end in each outcome."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import httpx2
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth import service
from app.auth.principal import AccessRole
from tests.integration.conftest import Api
from tests.support.scripted_openai import contract_reply

FAITHFUL = contract_reply("FAITHFUL")
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)
# Supplied replies and the outcome the policy gives them (no confirmations: a mismatch stands).
REPLIES: Mapping[str, dict[str, str]] = {
    "passed": {"translator": FAITHFUL, "judge": JUDGE_FAITHFUL},
    "flagged": {"translator": contract_reply("MISMATCH", issues="n < 0"), "judge": JUDGE_FAITHFUL},
    "needs_review": {"translator": "no verdict in this reply", "judge": JUDGE_FAITHFUL},
}


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def make_key(api: Api, role: AccessRole | str, name: str) -> str:
    """A key made by the key service, committed, as `faithscreen keys create` makes one."""
    async with api.runtime.sessions() as session:
        created = await service.create_key(session, name, AccessRole(role))
        await session.commit()
    return created.key


async def revoke(api: Api, name: str) -> None:
    async with api.runtime.sessions() as session:
        await service.revoke_key(session, name)
        await session.commit()


def pair(n: int, outcome: str, **extra: Any) -> dict[str, Any]:
    """A distinct pair (its number is in both statements) with replies ending in `outcome`."""
    return {
        "informal": f"For every natural number n, n + {n} = {n} + n.",
        "formal": f"theorem add_comm_{n} (n : ℕ) : n + {n} = {n} + n := by sorry",
        "external_id": f"pair-{n}",
        "replies": REPLIES[outcome],
        **extra,
    }


async def submit(api: Api, key: str | None, n: int, outcome: str) -> str:
    """Submit a pair with supplied replies; returns the screening id (decided at once)."""
    headers = bearer(key) if key else {}
    response = await api.client.post("/v1/screenings", json=pair(n, outcome), headers=headers)
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    got = await api.client.get(f"/v1/screenings/{screening_id}", headers=headers)
    assert got.json()["outcome"] == outcome, got.text
    return screening_id


async def queue_items(api: Api, key: str | None, **params: Any) -> list[dict[str, Any]]:
    """Every item the listing returns for `params`, following the cursor to the end."""
    headers = bearer(key) if key else {}
    found: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        query = params | ({"cursor": cursor} if cursor else {})
        response = await api.client.get("/v1/queue", params=query, headers=headers)
        assert response.status_code == 200, response.text
        body = response.json()
        found += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            return found


def error_code(response: httpx2.Response, status: int) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"} and body["error"]["message"], body
    code: str = body["error"]["code"]
    return code


async def wait_until_blocked(sessions: async_sessionmaker[AsyncSession]) -> None:
    """On PostgreSQL, poll (10 s at most) until a session of this database waits on a lock.
    SQLite shows no such thing: there the race may run in either order, and either way
    only one side may win."""
    async with sessions() as session:
        if session.get_bind().dialect.name != "postgresql":
            return
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if (await session.execute(waiting)).scalar_one():
                return
            await session.rollback()  # a fresh snapshot of pg_stat_activity for the next look
        raise AssertionError("the racing transaction never waited for the first one's lock")
