"""Claims on queue items: two reviewers claiming at once (exactly one wins), leases that
lapse (by a moved clock, and over HTTP with a tiny lease), and releases."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx2
import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError
from app.models.api_key import AccessRole
from app.repositories import queue_items
from app.review_queue import service
from app.settings import Settings
from app.vocabulary import DecisionValue
from tests.support.clock import MovableClock
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import (
    bearer,
    error_code,
    make_key,
    submit,
    wait_until_blocked,
)
from tests.support.review_queue import queue_items as list_queue

ALICE = Principal("alice", AccessRole.REVIEWER)
BOB = Principal("bob", AccessRole.REVIEWER)
ADMIN = Principal("root", AccessRole.ADMIN)


@pytest.fixture
async def api(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Api]:
    settings = unconfigured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as started:
        yield started


async def seed_items(api: Api, count: int) -> list[int]:
    """`count` needs_review screenings; returns their queue item ids, oldest first."""
    key = await make_key(api, AccessRole.SUBMITTER, f"bot-{time.monotonic_ns()}")
    for n in range(count):
        await submit(api, key, n, "needs_review")
    async with api.runtime.sessions() as session:
        page, _ = await queue_items.list_page(
            session, queue_items.QueueFilters(), cursor=None, limit=500
        )
    return [item.id for item in page]


async def test_two_reviewers_claiming_at_once_exactly_one_wins(api: Api) -> None:
    ids = await seed_items(api, 8)
    keys = [await make_key(api, AccessRole.REVIEWER, name) for name in ("alice", "bob")]
    transport = httpx2.ASGITransport(app=api.app)
    clients = [
        httpx2.AsyncClient(transport=transport, base_url="http://test", headers=bearer(key))
        for key in keys
    ]
    try:
        for item_id in ids:
            claims = [client.post(f"/v1/queue/{item_id}/claim") for client in clients]
            answers = await asyncio.gather(*claims)
            assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
            winner = next(a for a in answers if a.status_code == 200).json()["claimed_by"]
            loser = next(a for a in answers if a.status_code == 409)
            assert loser.json()["error"]["code"] == "claimed_by_other"
            assert winner in loser.json()["error"]["message"]
    finally:
        for client in clients:
            await client.aclose()


async def test_a_claim_racing_an_uncommitted_claim_waits_and_loses(
    api: Api, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    (item_id,) = await seed_items(api, 1)
    now = utcnow()
    async with session_factory() as first, session_factory() as second:
        await service.claim(first, ALICE, item_id, claim_seconds=1800, now=now)
        # The second claim starts while the first is uncommitted: it must wait for it (a
        # row lock on PostgreSQL, the write lock on SQLite), then see the item taken.
        racing = asyncio.create_task(
            service.claim(second, BOB, item_id, claim_seconds=1800, now=now)
        )
        await wait_until_blocked(session_factory)
        assert not racing.done()
        await first.commit()
        with pytest.raises(AppError) as lost:
            await racing
        assert lost.value.code == "claimed_by_other"
        await second.rollback()
    async with session_factory() as session:
        item = await queue_items.get(session, item_id)
    assert item is not None and item.claimed_by == "alice"


async def test_a_lapsed_claim_can_be_taken_and_a_reclaim_extends(
    session_factory: async_sessionmaker[AsyncSession], api: Api
) -> None:
    (item_id,) = await seed_items(api, 1)
    t0 = utcnow()
    async with session_factory() as session:

        async def claim(who: Principal, seconds: float) -> AppError | None:
            try:
                await service.claim(
                    session, who, item_id, claim_seconds=60, now=t0 + timedelta(seconds=seconds)
                )
            except AppError as error:
                return error
            return None

        assert await claim(ALICE, 0) is None
        refused = await claim(BOB, 30)
        assert refused is not None and (refused.status_code, refused.code) == (
            409,
            "claimed_by_other",
        )
        assert await claim(ALICE, 30) is None  # the holder again: now until t0 + 90 s
        assert await claim(BOB, 61) is not None
        assert await claim(BOB, 91) is None  # lapsed: anyone may take it
        with pytest.raises(AppError) as late:
            await service.decide(
                session, ALICE, item_id, DecisionValue.FAITHFUL, now=t0 + timedelta(seconds=92)
            )
        assert late.value.code == "claimed_by_other"
        await session.commit()


async def test_a_lapsed_claim_still_lets_its_holder_decide_until_taken(
    session_factory: async_sessionmaker[AsyncSession], api: Api
) -> None:
    (item_id,) = await seed_items(api, 1)
    t0 = utcnow()
    async with session_factory() as session:
        await service.claim(session, ALICE, item_id, claim_seconds=60, now=t0)
        late = t0 + timedelta(hours=2)
        page = await service.list_items(session, BOB, now=late)
        assert [e.status.value for e in page.entries] == ["open"]  # lapsed: listed as open
        decided = await service.decide(
            session, ALICE, item_id, DecisionValue.MISMATCH, "x", now=late
        )
        assert (decided.row.actor, decided.row.decision) == ("alice", "mismatch")
        await session.commit()


async def test_over_http_a_lease_lapses_and_another_reviewer_takes_over(
    start_api: StartApi, unconfigured_settings: Settings, moved_clock: MovableClock
) -> None:
    """The lease runs on the application's clock: moved past it, not waited for, so the
    second reviewer's own lease cannot lapse too on a loaded machine. Real time still flows
    under the moved offset, so the step that must land inside a lease lands mid-way, with
    five minutes to spare (moving it to 59 of 60 s failed once when four suites shared
    two cores and bob's claim came more than a second after alice's)."""
    lease = 600
    settings = unconfigured_settings.model_copy(
        update={"auth": "on", "review_claim_seconds": lease}
    )
    async with start_api(settings, with_worker=False) as api:
        (item_id,) = await seed_items(api, 1)
        alice, bob = [await make_key(api, AccessRole.REVIEWER, n) for n in ("alice", "bob")]
        claim = f"/v1/queue/{item_id}/claim"
        first = await api.client.post(claim, headers=bearer(alice))
        assert first.status_code == 200 and first.json()["claimed_by"] == "alice"
        moved_clock.advance(lease / 2)
        assert (
            error_code(await api.client.post(claim, headers=bearer(bob)), 409) == "claimed_by_other"
        )
        moved_clock.advance(lease / 2 + 1)  # past alice's lease; bob's new one has 600 s
        taken = await api.client.post(claim, headers=bearer(bob))
        assert taken.status_code == 200 and taken.json()["claimed_by"] == "bob", taken.text
        decision = {"decision": "faithful"}
        late = await api.client.post(
            f"/v1/queue/{item_id}/decision", json=decision, headers=bearer(alice)
        )
        assert error_code(late, 409) == "claimed_by_other"


async def test_releases(api: Api) -> None:
    (item_id,) = await seed_items(api, 1)
    alice, bob = [await make_key(api, AccessRole.REVIEWER, n) for n in ("alice", "bob")]
    admin = await make_key(api, AccessRole.ADMIN, "root")
    path = f"/v1/queue/{item_id}"
    assert (
        error_code(await api.client.post(f"{path}/release", headers=bearer(alice)), 409)
        == "not_claimed"
    )
    await api.client.post(f"{path}/claim", headers=bearer(alice))
    refused = await api.client.post(f"{path}/release", headers=bearer(bob))
    assert error_code(refused, 403) == "not_claim_holder"
    released = await api.client.post(f"{path}/release", headers=bearer(alice))
    assert released.status_code == 200 and released.json()["status"] == "open"
    assert (released.json()["claimed_by"], released.json()["claim_expires_at"]) == (None, None)
    await api.client.post(f"{path}/claim", headers=bearer(bob))
    by_admin = await api.client.post(f"{path}/release", headers=bearer(admin))
    assert by_admin.status_code == 200, by_admin.text
    assert [i["status"] for i in await list_queue(api, alice)] == ["open"]
    assert error_code(await api.client.post("/v1/queue/424242/release", headers=bearer(admin)), 404)
