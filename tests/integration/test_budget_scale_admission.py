"""Provider budgets at scale (app/budgets, app/repositories/provider_budgets.py) on SQLite
and PostgreSQL: a caller that waited for the row's lock decides at the time it took it.

Starts are read from what each admission reserved, never from how long anything took; the
wait for the lock is made by moving the application's clock while the locking statement
runs, as a caller queued behind another's lock would see it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from app.clock import utcnow
from app.llm.gate import Pass
from tests.support.budgets import Sessions, gate_of, limited_provider
from tests.support.clock import MovableClock


@contextmanager
def lock_waited_for(engine: AsyncEngine, clock: MovableClock, seconds: float) -> Iterator[None]:
    """The next statement that locks a budget row (UPDATE provider_budgets ... RETURNING)
    runs `seconds` later by the application's clock: its caller waited for the lock."""
    armed = [True]

    def before(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if armed[0] and statement.lstrip().upper().startswith("UPDATE PROVIDER_BUDGETS"):
            armed[0] = False
            clock.advance(seconds)

    event.listen(engine.sync_engine, "before_cursor_execute", before)
    try:
        yield
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", before)
    assert not armed[0], "no statement locked the budget's row"


def start_of(admitted: Pass) -> Any:
    return admitted.admitted.start  # type: ignore[attr-defined]


async def test_a_caller_that_waited_for_the_lock_decides_at_the_time_it_took_it(
    engine: AsyncEngine, session_factory: Sessions, moved_clock: MovableClock
) -> None:
    # 6 a minute: one start each 10 s.
    a = gate_of(session_factory, limited_provider(requests_per_minute=6), "host:1:aaaa")
    b = gate_of(session_factory, limited_provider(requests_per_minute=6), "host:2:bbbb")
    a.horizon = b.horizon = 55
    first = start_of(await a.enter(10))
    # b looks (next start: first + 10 s, within its horizon), then waits 30 s for the lock.
    with lock_waited_for(engine, moved_clock, 30):
        second = start_of(await b.enter(10))
    locked_at = utcnow()
    # Decided at the time the lock was taken: its start is then, not first + 10 s (a time
    # already past, which would let the next caller start in the same second as it).
    assert (second - first).total_seconds() >= 30
    assert (locked_at - second).total_seconds() < 5
    third = start_of(await a.enter(10))
    assert (third - second).total_seconds() == pytest.approx(10)
