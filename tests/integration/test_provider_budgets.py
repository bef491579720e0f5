"""Provider budgets (app/budgets) on a real database, SQLite and PostgreSQL: two processes'
gates (two `Budgets` with their own owner names, on one database) share one budget.

Starts are read from what each admission reserved, never from how long anything took: the
gates' `sleep` only records the waits it is asked for. The multi-process tests (real
`faithscreen worker` processes) are in tests/e2e/test_provider_budgets_workers.py.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from sqlalchemy import select, update

from app.budgets.service import ProviderGate
from app.clock import utcnow
from app.llm.budget import BATCH_AHEAD_SECONDS, IN_FLIGHT, REQUESTS, TOKENS
from app.llm.errors import ProviderBackoff
from app.llm.gate import BATCH_CALLS
from app.models.provider_budget import ProviderBudget, ProviderBudgetLease
from app.repositories.provider_waits import WAIT_NOTE
from app.settings import ProviderSettings
from tests.support.budgets import Sessions, Sleeps, gate_of, limited_provider
from tests.support.clock import MovableClock


def provider(**limits: int) -> ProviderSettings:
    # A base URL with credentials in it, as these tests have always used.
    return limited_provider("https://user:secret@llm.example/v1/?key=sk-1", **limits)


def two_processes(sessions: Sessions, settings: ProviderSettings) -> tuple[ProviderGate, ...]:
    return tuple(gate_of(sessions, settings, owner) for owner in ("host:1:aaaa", "host:2:bbbb"))


async def leases(sessions: Sessions) -> list[str]:
    async with sessions() as session:
        return list((await session.execute(select(ProviderBudgetLease.owner))).scalars())


async def test_requests_per_minute_is_one_budget_for_both_processes(
    session_factory: Sessions,
) -> None:
    # 6 a minute: 10 s apart, far more than a loaded machine takes between two admissions.
    a, b = two_processes(session_factory, provider(requests_per_minute=6))
    a.horizon = b.horizon = 55
    starts = [(await gate.enter(100)).admitted.start for gate in (a, b, a, b, a, b)]  # type: ignore[attr-defined]
    # Ten seconds apart, whichever process asked: six starts over fifty seconds.
    assert [(later - starts[0]).total_seconds() for later in starts] == [0, 10, 20, 30, 40, 50]
    with pytest.raises(ProviderBackoff) as raised:
        await a.enter(100)  # the seventh would start 60 s on: past the horizon
    assert raised.value.budget == REQUESTS
    assert 55 < raised.value.retry_after <= 60
    assert raised.value.describe().startswith(WAIT_NOTE)
    async with session_factory() as session:
        rows = (await session.execute(select(ProviderBudget))).scalars().all()
    # One row, keyed without the URL's credentials.
    assert [(row.base_url, row.model) for row in rows] == [("https://llm.example/v1", "m")]


async def test_tokens_are_corrected_from_usage(session_factory: Sessions) -> None:
    # 60 tokens a minute: one a second, so each gap is seconds, far more than a loaded
    # machine takes between two admissions.
    a, b = two_processes(session_factory, provider(tokens_per_minute=60))
    a.horizon = 200
    first = await a.enter(100)
    await first.leave(used_tokens=20, pause_seconds=None)  # estimated 100, used 20
    second = await b.enter(100)
    gap = second.admitted.start - first.admitted.start  # type: ignore[attr-defined]
    assert gap == timedelta(seconds=20)  # 20 tokens' worth, not the 100 estimated
    await second.leave(used_tokens=None, pause_seconds=None)  # no usage: the estimate stands
    third = await a.enter(50)
    gap = third.admitted.start - second.admitted.start  # type: ignore[attr-defined]
    assert gap == timedelta(seconds=100)
    b.horizon = 1
    with pytest.raises(ProviderBackoff) as raised:
        await b.enter(50)  # 5 s on
    assert raised.value.budget == TOKENS


async def test_calls_in_flight_are_counted_across_processes(session_factory: Sessions) -> None:
    a, b = two_processes(session_factory, provider(max_in_flight=2))
    b.horizon = 0.2
    held = [await a.enter(10), await b.enter(10)]
    assert sorted(await leases(session_factory)) == ["host:1:aaaa", "host:2:bbbb"]
    with pytest.raises(ProviderBackoff) as raised:
        await b.enter(10)
    assert raised.value.budget == IN_FLIGHT
    await held[0].leave(used_tokens=5, pause_seconds=None)
    third = await b.enter(10)
    assert sorted(await leases(session_factory)) == ["host:2:bbbb", "host:2:bbbb"]
    for admitted in (held[1], third):
        await admitted.leave(used_tokens=5, pause_seconds=None)
    assert await leases(session_factory) == []


async def test_a_waiter_is_woken_when_a_call_of_its_process_ends(
    session_factory: Sessions,
) -> None:
    [gate] = two_processes(session_factory, provider(max_in_flight=1))[:1]
    first = await gate.enter(10)
    waiting = asyncio.create_task(gate.enter(10))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await first.leave(used_tokens=1, pause_seconds=None)
    second = await asyncio.wait_for(waiting, timeout=60)
    await second.leave(used_tokens=1, pause_seconds=None)


async def test_a_dead_process_s_lease_stops_counting_when_it_expires(
    session_factory: Sessions, moved_clock: MovableClock
) -> None:
    a, b = two_processes(session_factory, provider(max_in_flight=1))
    b.horizon = 0.2
    await a.enter(10)  # and never leaves: its process died
    with pytest.raises(ProviderBackoff):
        await b.enter(10)
    # The lease lasts the attempt's deadline (100 s + 5 s) and a margin of 30 s: 135 s.
    moved_clock.advance(60)
    with pytest.raises(ProviderBackoff):
        await b.enter(10)
    moved_clock.advance(80)
    taken = await b.enter(10)
    assert await leases(session_factory) == ["host:2:bbbb"]
    await taken.leave(used_tokens=None, pause_seconds=None)


async def test_a_call_cancelled_while_it_waits_for_its_start_gives_its_lease_back(
    session_factory: Sessions,
) -> None:
    a, _ = two_processes(session_factory, provider(requests_per_minute=6, max_in_flight=5))
    first = await a.enter(10)

    async def never(_seconds: float) -> None:
        await asyncio.Event().wait()

    a.sleep = never
    waiting = asyncio.create_task(a.enter(10))  # its start is 10 s after the first's
    deadline = asyncio.get_running_loop().time() + 60
    while len(await leases(session_factory)) < 2:
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.02)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert len(await leases(session_factory)) == 1
    await first.leave(used_tokens=None, pause_seconds=None)
    assert await leases(session_factory) == []


@pytest.mark.parametrize("limits", [{}, {"requests_per_minute": 600}], ids=["open", "limited"])
async def test_a_retry_after_pauses_the_provider_for_the_other_process(
    session_factory: Sessions, limits: dict[str, int]
) -> None:
    a, b = two_processes(session_factory, provider(**limits))
    got = await a.enter(10)
    await got.leave(used_tokens=None, pause_seconds=300)
    b.horizon = 10
    with pytest.raises(ProviderBackoff) as raised:
        await b.enter(10)
    # The provider's own ask, not a limit of the budget's.
    assert raised.value.budget is None
    assert raised.value.describe() == f"{WAIT_NOTE} {raised.value.retry_after:.0f} s"
    b.horizon = 400
    await (await b.enter(10)).leave(used_tokens=None, pause_seconds=None)
    assert isinstance(b.sleep, Sleeps)
    assert 200 < b.sleep[-1] <= 300  # waited out the pause a's call was asked for
    async with session_factory() as session:
        before = (await session.execute(select(ProviderBudget.paused_until))).scalar_one()
    await a.pause(1)  # a shorter pause asked later does not shorten it
    async with session_factory() as session:
        assert (await session.execute(select(ProviderBudget.paused_until))).scalar_one() == before


async def test_batch_calls_do_not_reserve_far_ahead_of_an_interactive_call(
    session_factory: Sessions,
) -> None:
    # 6 a minute: 10 s apart, far more than a loaded machine takes between admissions.
    batch, interactive = two_processes(session_factory, provider(requests_per_minute=6))
    batch.horizon = interactive.horizon = 30
    token = BATCH_CALLS.set(True)
    try:
        granted, backed_off = [], 0
        for _ in range(8):  # eight batch callers, none of whose calls has started yet
            try:
                granted.append(await batch.enter(10))
            except ProviderBackoff as raised:
                backed_off += 1
                assert raised.budget == REQUESTS
    finally:
        BATCH_CALLS.reset(token)
    # Only the first reserved (its start was now); the others were told to ask again once
    # the next start is within BATCH_AHEAD_SECONDS, slept for it (the clock here stands
    # still), and at the horizon were put back, never reserving 10, 20 or 30 s ahead.
    assert (len(granted), backed_off) == (1, 7)
    sleeps: list[float] = batch.sleep  # type: ignore[assignment]
    # Until the next start is within reach, + jitter.
    assert sleeps and max(sleeps) <= 10 - BATCH_AHEAD_SECONDS + 0.05
    async with session_factory() as session:
        free = (await session.execute(select(ProviderBudget.next_request_at))).scalar_one()
    assert (free - utcnow()).total_seconds() <= 10
    # The interactive call takes the next free start, one interval on, not behind them.
    now = utcnow()
    start = (await interactive.enter(10)).admitted.start  # type: ignore[attr-defined]
    assert (start - now).total_seconds() <= 10


async def test_a_caller_with_no_free_slot_does_not_wait_on_the_row_lock(
    session_factory: Sessions,
) -> None:
    a, b = two_processes(session_factory, provider(max_in_flight=1))
    b.horizon = 0.2
    held = await a.enter(10)
    async with session_factory() as holder:
        # Another transaction holds the row's lock (as a granting caller does briefly).
        await holder.execute(update(ProviderBudget).values(updated_at=utcnow()))
        # b finds no free slot from a plain read and polls that, never asking for the
        # lock: it is put back at its horizon instead of queueing behind the holder.
        with pytest.raises(ProviderBackoff) as raised:
            await asyncio.wait_for(b.enter(10), timeout=20)
        assert raised.value.budget == IN_FLIGHT
        await holder.rollback()
    await held.leave(used_tokens=None, pause_seconds=None)
