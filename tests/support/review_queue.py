"""Shared by the test_auth_*, test_queue_* and test_review_* files: an in-process API with
auth on, keys made through the real key service, pairs whose supplied replies end in each
outcome, and a review desk (an API with a key for each person)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth import service
from app.models.api_key import AccessRole
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
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
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (await session.execute(waiting)).scalar_one():
                return
            await session.rollback()  # a fresh snapshot of pg_stat_activity for the next look
        raise AssertionError("the racing transaction never waited for the first one's lock")


# The people of a review desk and their access roles.
PEOPLE = {
    "admin": AccessRole.ADMIN,
    "alice": AccessRole.REVIEWER,
    "bob": AccessRole.REVIEWER,
    "carol": AccessRole.REVIEWER,
    "bot": AccessRole.SUBMITTER,
}


@dataclass
class Desk:
    """An API with auth on and a key for each of PEOPLE, called by name."""

    api: Api
    keys: dict[str, str]

    async def post(self, who: str, path: str, body: Any = None) -> httpx2.Response:
        return await self.api.client.post(path, json=body, headers=bearer(self.keys[who]))

    async def get(self, who: str, path: str, **params: Any) -> httpx2.Response:
        return await self.api.client.get(path, params=params, headers=bearer(self.keys[who]))

    async def submit(self, n: int, outcome: str, external_id: str | None = None) -> str:
        """Submit pair `n` (the same `n`, the same pair) as the bot; its screening id."""
        body = pair(n, outcome) | ({"external_id": external_id} if external_id else {})
        response = await self.post("bot", "/v1/screenings", body)
        assert response.status_code == 202, response.text
        screening_id: str = response.json()["id"]
        return screening_id

    async def item(self, item_id: int, who: str = "admin") -> dict[str, Any]:
        response = await self.get(who, f"/v1/queue/{item_id}")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body

    async def item_of(self, screening_id: str) -> dict[str, Any]:
        """The item (as the admin lists it) that answers for the screening."""
        found = [
            i
            for i in await queue_items(self.api, self.keys["admin"])
            if screening_id in i["screening_ids"]
        ]
        assert len(found) == 1, found
        return found[0]

    async def decide(self, who: str, item_id: int, body: dict[str, Any]) -> httpx2.Response:
        """Claim the item as `who` (a refusal is left to the decision to show), then decide."""
        await self.post(who, f"/v1/queue/{item_id}/claim")
        return await self.post(who, f"/v1/queue/{item_id}/decision", body)


async def staffed(api: Api) -> Desk:
    """A desk on `api`: a key made for each of PEOPLE."""
    keys = {name: await make_key(api, role, name) for name, role in PEOPLE.items()}
    return Desk(api, keys)


def desk_settings(settings: Settings, **updates: Any) -> Settings:
    return settings.model_copy(update={"auth": "on", **updates})


@asynccontextmanager
async def open_desk(start_api: StartApi, settings: Settings, **updates: Any) -> AsyncIterator[Desk]:
    """A desk on `settings` with auth on (and `updates`), no worker, inside a test. (A
    fixture enters start_api itself and yields `staffed(api)`: a context manager around
    it would be closed by pytest-asyncio in another task than the one that opened it.)"""
    async with start_api(desk_settings(settings, **updates), with_worker=False) as api:
        yield await staffed(api)
