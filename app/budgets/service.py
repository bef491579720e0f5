"""The gate each LLM client of a process is given: it admits every attempt within its
provider's budget as stored in the database, so all processes share one budget.

A call whose start is reserved within `horizon` seconds (a call's longest wait inside the
client, MAX_WAIT_SECONDS) waits for it here; a longer wait raises ProviderBackoff, and the
worker puts the screening back for that long, freeing its slot for other work (as for a
provider's Retry-After). A call that finds every in-flight slot taken polls for one (woken
at once when a call of this process ends) for up to `horizon`, then is put back too.
Those polls read the row without its lock (app/repositories/provider_budgets.py).

A batch screening's call (app.llm.gate.BATCH_CALLS) reserves no further ahead than
BATCH_AHEAD_SECONDS: told `Later`, it sleeps until its start would be within reach (with
jitter, so waiters do not all ask at once) and asks again, within the same `horizon`. It
also leaves the budget's interactive reserve of in-flight slots free (Budget.
interactive_reserve): past `max_in_flight - reserve` calls in flight it polls as if busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.clock import utcnow
from app.llm.budget import IN_FLIGHT, Budget, Busy, Later, Wait, ahead_for
from app.llm.errors import ProviderBackoff
from app.llm.gate import BATCH_CALLS, Pass
from app.llm.retry import MAX_WAIT_SECONDS
from app.repositories import provider_budgets
from app.repositories.provider_budgets import Admitted, Provider
from app.settings import ProviderSettings

log = logging.getLogger("faithscreen.budgets")

Sleep = Callable[[float], Awaitable[object]]
# A lease outlives its attempt's deadline (timeout + connect timeout) by this much.
LEASE_MARGIN_SECONDS = 30.0
FIRST_POLL_SECONDS = 0.05
LAST_POLL_SECONDS = 0.5
# How long a screening is put back for after waiting `horizon` for an in-flight slot.
IN_FLIGHT_DEFERRAL_SECONDS = 30.0


def provider_of(settings: ProviderSettings) -> Provider:
    """The budget's key: the base URL without user info, query or trailing slash (which
    may carry credentials, and do not make another provider), and the model."""
    parts = urlsplit(settings.base_url or "")
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    path = parts.path.rstrip("/")
    return Provider(f"{parts.scheme}://{host}{port}{path}", settings.model or "")


def budget_of(settings: ProviderSettings) -> Budget:
    return Budget(settings.requests_per_minute, settings.tokens_per_minute, settings.max_in_flight)


@dataclass
class ProviderGate:
    """app.llm.gate.CallGate for one provider, in one process."""

    sessions: async_sessionmaker[AsyncSession]
    provider: Provider
    budget: Budget
    owner: str
    lease_seconds: float
    horizon: float = MAX_WAIT_SECONDS
    sleep: Sleep = asyncio.sleep
    _freed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def limits_requests(self) -> bool:
        return self.budget.requests_per_minute > 0

    async def enter(self, tokens: int) -> Pass:
        if self.budget.unlimited:
            await self._wait_for_pause()
            return _PausePass(self)
        admitted = await self._admitted(tokens)
        admission = _BudgetPass(self, admitted, tokens)
        try:
            await self._sleep_until(admitted.start)
        except BaseException:  # cancelled while waiting: the lease is given back
            await admission.leave(used_tokens=None, pause_seconds=None)
            raise
        return admission

    async def _admitted(self, tokens: int) -> Admitted:
        waited, poll = 0.0, FIRST_POLL_SECONDS
        while True:
            decision = await self._admit(tokens)
            if isinstance(decision, Admitted):
                return decision
            if isinstance(decision, Wait):
                raise ProviderBackoff(decision.seconds, budget=decision.limit)
            if isinstance(decision, Later):
                # Its start is within the horizon, only not within its reach: the wait
                # counts against the horizon like an in-flight slot's.
                if waited + decision.seconds > self.horizon:
                    raise ProviderBackoff(decision.seconds, budget=decision.limit)
                pause = decision.seconds + random.uniform(0, FIRST_POLL_SECONDS)
                await self.sleep(pause)
                waited += pause
                continue
            if waited >= self.horizon:
                raise ProviderBackoff(IN_FLIGHT_DEFERRAL_SECONDS, budget=IN_FLIGHT)
            pause = poll * random.uniform(0.5, 1.0)
            await self._until_freed(pause)
            waited, poll = waited + pause, min(2 * poll, LAST_POLL_SECONDS)

    async def _admit(self, tokens: int) -> Admitted | Wait | Later | Busy:
        batch = BATCH_CALLS.get()
        async with self.sessions() as session:
            decision = await provider_budgets.admit_call(
                session,
                self.provider,
                self.budget,
                tokens=tokens,
                owner=self.owner,
                clock=utcnow,
                horizon=self.horizon,
                lease_seconds=self.lease_seconds,
                ahead=ahead_for(batch, self.horizon),
                batch=batch,
            )
            await session.commit()
        return decision

    async def _wait_for_pause(self) -> None:
        """No limits here: only a pause some process stored holds the call back."""
        async with self.sessions() as session:
            until = await provider_budgets.paused_until(session, self.provider)
        if until is None:
            return
        wait = (until - utcnow()).total_seconds()
        if wait > self.horizon:
            raise ProviderBackoff(wait)
        await self._sleep_until(until)

    async def _sleep_until(self, start: datetime) -> None:
        wait = (start - utcnow()).total_seconds()
        if wait > 0:
            await self.sleep(wait)

    async def _until_freed(self, seconds: float) -> None:
        """Until a call of this process ends, or `seconds` (another process's may have)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._freed.wait(), timeout=seconds)

    def ended(self) -> None:
        """A call ended: wake this process's waiters to try again."""
        self._freed.set()
        self._freed = asyncio.Event()

    async def settle(
        self, admitted: Admitted, charged: int, used: int | None, pause: float | None
    ) -> None:
        async def settle(session: AsyncSession) -> None:
            await provider_budgets.settle_call(
                session,
                admitted,
                self.budget,
                charged=charged,
                used=used,
                pause_seconds=pause,
                now=utcnow(),
            )

        await self._bookkeeping(settle)
        self.ended()

    async def pause(self, seconds: float) -> None:
        async def pause(session: AsyncSession) -> None:
            await provider_budgets.pause_provider(session, self.provider, seconds, now=utcnow())

        await self._bookkeeping(pause)

    async def _bookkeeping(self, step: Callable[[AsyncSession], Awaitable[None]]) -> None:
        # The call's reply matters more than its accounting: a failed write is logged and
        # left to the lease's expiry, never raised over what the call returned.
        try:
            async with self.sessions() as session:
                await step(session)
                await session.commit()
        except SQLAlchemyError as error:
            log.warning(
                "settling a call on the budget of %s failed: %s", self.provider.model, error
            )


@dataclass
class _BudgetPass:
    gate: ProviderGate
    admitted: Admitted
    charged: int
    _left: bool = False

    async def leave(self, *, used_tokens: int | None, pause_seconds: float | None) -> None:
        if self._left:
            return
        self._left = True
        await self.gate.settle(self.admitted, self.charged, used_tokens, pause_seconds)


@dataclass
class _PausePass:
    gate: ProviderGate

    async def leave(self, *, used_tokens: int | None, pause_seconds: float | None) -> None:
        if pause_seconds is not None:
            await self.gate.pause(pause_seconds)


class Budgets:
    """A process's gates, one per provider: roles and judges that name the same base URL
    and model share one gate and one budget (the strictest of their settings)."""

    def __init__(self, sessions: async_sessionmaker[AsyncSession], *, owner: str) -> None:
        self._sessions = sessions
        self._owner = owner
        self._gates: dict[Provider, ProviderGate] = {}

    def gate(self, settings: ProviderSettings) -> ProviderGate:
        provider, budget = provider_of(settings), budget_of(settings)
        lease = settings.timeout_seconds + settings.connect_timeout_seconds + LEASE_MARGIN_SECONDS
        gate = self._gates.get(provider)
        if gate is None:
            gate = ProviderGate(self._sessions, provider, budget, self._owner, lease)
            self._gates[provider] = gate
        else:
            gate.budget = gate.budget.strictest(budget)
            gate.lease_seconds = max(gate.lease_seconds, lease)
        return gate
