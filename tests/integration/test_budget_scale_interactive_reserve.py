"""Provider budgets' interactive reserve (app/llm/budget.py, Budget.interactive_reserve)
on SQLite and PostgreSQL: with every in-flight slot a batch call may hold taken, an
interactive call is still admitted at once, and a further batch call is not.
"""

from __future__ import annotations

import pytest

from app.budgets.service import ProviderGate
from app.llm.budget import IN_FLIGHT
from app.llm.errors import ProviderBackoff
from app.llm.gate import BATCH_CALLS, Pass
from tests.support.budgets import Sessions, gate_of, limited_provider


def gate_with(sessions: Sessions, max_in_flight: int, owner: str) -> ProviderGate:
    gate = gate_of(sessions, limited_provider(max_in_flight=max_in_flight), owner)
    gate.horizon = 0.2  # a call that finds no slot is put back after polling this long
    return gate


async def _batch_enter(gate: ProviderGate) -> Pass:
    token = BATCH_CALLS.set(True)
    try:
        return await gate.enter(10)
    finally:
        BATCH_CALLS.reset(token)


@pytest.mark.parametrize(("max_in_flight", "batch_slots"), [(4, 3), (20, 18)])
async def test_batch_calls_leave_the_interactive_reserve_free(
    session_factory: Sessions, max_in_flight: int, batch_slots: int
) -> None:
    batch = gate_with(session_factory, max_in_flight, "host:1:aaaa")
    interactive = gate_with(session_factory, max_in_flight, "host:2:bbbb")
    held = [await _batch_enter(batch) for _ in range(batch_slots)]
    # Every slot a batch call may hold is taken: a further batch call is not admitted...
    with pytest.raises(ProviderBackoff) as raised:
        await _batch_enter(batch)
    assert raised.value.budget == IN_FLIGHT
    # ... and interactive calls are, into the reserve (every reserved slot), though no
    # call ends meanwhile.
    for _ in range(max_in_flight - batch_slots):
        held.append(await interactive.enter(10))
    with pytest.raises(ProviderBackoff):
        await interactive.enter(10)  # the budget itself is full now
    for admitted in held:
        await admitted.leave(used_tokens=None, pause_seconds=None)
    # Once they end, batch calls take their share again.
    await (await _batch_enter(batch)).leave(used_tokens=None, pause_seconds=None)
