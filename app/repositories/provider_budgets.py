"""The provider budget rows (app/models/provider_budget.py): admit a call, settle it.

Each function is one short transaction's work, committed by the caller; none is ever
held across an LLM call. The row is locked before it is read: the first statement is an
UPDATE ... RETURNING of the row, which on PostgreSQL locks it (as SELECT ... FOR UPDATE
would) and on SQLite takes the database's write lock, so two processes never both read
the same budget and both spend it.

Before the lock, `admit_call` reads the row and its live leases plainly: a call that
would get no grant (every slot in flight taken, or its start further off than it may
reserve) is answered from that read and never queues on the row's lock. Only a call that
looks grantable locks the row, and decides again on what it then reads, at the time read
once it holds the lock: a caller that waited for the lock never decides (nor counts
expired leases) at the time it began to wait, which would start its call in the past and
let the next one start within an interval of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession

from app.llm.budget import Bucket, Budget, Busy, Grant, Later, Wait, admit, paused, settled
from app.models.provider_budget import ProviderBudget, ProviderBudgetLease
from app.repositories.conflicts import insert_unless_exists

Row = ProviderBudget


@dataclass(frozen=True, slots=True)
class Provider:
    """A budget's key: base URL (without credentials) and model."""

    base_url: str
    model: str


@dataclass(frozen=True, slots=True)
class Admitted:
    """A granted call: its start, the row it was charged on, and its lease (None when the
    budget has no in-flight limit)."""

    start: datetime
    budget_id: int
    lease_id: int | None


async def admit_call(
    session: AsyncSession,
    provider: Provider,
    budget: Budget,
    *,
    tokens: int,
    owner: str,
    clock: Callable[[], datetime],
    horizon: float,
    lease_seconds: float,
    ahead: float | None = None,
    batch: bool = False,
) -> Admitted | Wait | Later | Busy:
    """Reserve a start for one call within `horizon` seconds, no further ahead than
    `ahead` (default: the horizon), or say why not; a `batch` call leaves the interactive
    reserve of the calls in flight free (app/llm/budget.py). `clock` is read for the
    unlocked look and again once the row is locked. Ends the session's transaction after
    its unlocked read (which wrote nothing), so call it on a session with no pending work."""
    now = clock()
    looked = await _unlocked(session, provider, budget, now)
    if looked is not None:
        decision = admit(looked, budget, tokens, now, horizon, ahead, batch=batch)
        if not isinstance(decision, Grant):
            return decision
        # The read's transaction ends before the lock is asked for: SQLite cannot turn a
        # read begun before another process's write into a write (SQLITE_BUSY_SNAPSHOT).
        await session.rollback()
    budget_id, bucket = await _locked(session, provider, now)
    now = clock()  # the lock may have been waited for: decide at the time it was taken
    if budget.max_in_flight:
        bucket = await _with_in_flight(session, budget_id, bucket, now)
    decision = admit(bucket, budget, tokens, now, horizon, ahead, batch=batch)
    if not isinstance(decision, Grant):
        return decision
    moved = {"next_request_at": decision.next_request_at, "next_token_at": decision.next_token_at}
    await session.execute(update(Row).where(Row.id == budget_id).values(moved))
    lease_id = None
    if budget.max_in_flight:
        expires = decision.start + timedelta(seconds=lease_seconds)
        lease_id = await _lease(session, budget_id, owner, expires)
    return Admitted(decision.start, budget_id, lease_id)


async def settle_call(
    session: AsyncSession,
    admitted: Admitted,
    budget: Budget,
    *,
    charged: int,
    used: int | None,
    pause_seconds: float | None,
    now: datetime,
) -> None:
    """The call ended: its tokens corrected from `used`, a pause the provider asked for
    stored for every process, and its lease freed. The row is locked before the lease is
    touched, in the order `admit_call` takes them, so two calls never wait on each other."""
    if (used is not None and budget.tokens_per_minute) or pause_seconds is not None:
        bucket = await _lock_by_id(session, admitted.budget_id, now)
        values: dict[str, Any] = {}
        if used is not None:
            values["next_token_at"] = settled(
                bucket.next_token_at, budget, charged=charged, used=used
            )
        if pause_seconds is not None:
            values["paused_until"] = paused(bucket.paused_until, now, pause_seconds)
        await session.execute(update(Row).where(Row.id == admitted.budget_id).values(values))
    if admitted.lease_id is not None:
        lease = ProviderBudgetLease.id == admitted.lease_id
        await session.execute(delete(ProviderBudgetLease).where(lease))


async def pause_provider(
    session: AsyncSession, provider: Provider, seconds: float, *, now: datetime
) -> None:
    """Store a provider's pause (a budget without limits, which holds no grant)."""
    budget_id, bucket = await _locked(session, provider, now)
    until = paused(bucket.paused_until, now, seconds)
    await session.execute(update(Row).where(Row.id == budget_id).values(paused_until=until))


async def paused_until(session: AsyncSession, provider: Provider) -> datetime | None:
    """The provider's stored pause, read without a lock (None: none, or no row yet)."""
    statement = select(Row.paused_until).where(
        Row.base_url == provider.base_url, Row.model == provider.model
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def lease_owners(session: AsyncSession) -> list[str]:
    """The distinct owners of calls in flight (for app/worker/owners.py)."""
    statement = select(ProviderBudgetLease.owner).distinct()
    return list((await session.execute(statement)).scalars())


async def expire_leases(session: AsyncSession, owners: Sequence[str]) -> int:
    """Delete the leases of owners known to be dead (app/worker/owners.py); how many."""
    if not owners:
        return 0
    statement = delete(ProviderBudgetLease).where(ProviderBudgetLease.owner.in_(owners))
    return cast(CursorResult[Any], await session.execute(statement)).rowcount


async def _unlocked(
    session: AsyncSession, provider: Provider, budget: Budget, now: datetime
) -> Bucket | None:
    """The provider's row and its unexpired leases, read without a lock (None: no row)."""
    statement = select(Row.id, Row.next_request_at, Row.next_token_at, Row.paused_until).where(
        Row.base_url == provider.base_url, Row.model == provider.model
    )
    row = (await session.execute(statement)).first()
    if row is None:
        return None
    live = 0
    if budget.max_in_flight:
        leases = ProviderBudgetLease
        count = (
            select(func.count())
            .select_from(leases)
            .where(leases.budget_id == row[0], leases.expires_at > now)
        )
        live = int((await session.execute(count)).scalar_one())
    return Bucket(row[1], row[2], row[3], live)


async def _locked(session: AsyncSession, provider: Provider, now: datetime) -> tuple[int, Bucket]:
    """The provider's row, locked (made on first use)."""
    where = (Row.base_url == provider.base_url, Row.model == provider.model)
    found = await _touch(session, now, *where)
    if found is None:
        values = {"base_url": provider.base_url, "model": provider.model}
        times = {"next_request_at": now, "next_token_at": now, "updated_at": now}
        await insert_unless_exists(session, Row, values | times, ["base_url", "model"])
        found = await _touch(session, now, *where)
    assert found is not None  # inserted above, and rows are never deleted
    return found


async def _lock_by_id(session: AsyncSession, budget_id: int, now: datetime) -> Bucket:
    found = await _touch(session, now, Row.id == budget_id)
    assert found is not None  # rows are never deleted
    return found[1]


async def _touch(session: AsyncSession, now: datetime, *where: Any) -> tuple[int, Bucket] | None:
    """UPDATE ... RETURNING: the row's lock taken and its values read in one statement."""
    statement = (
        update(Row)
        .where(*where)
        .values(updated_at=now)
        .returning(Row.id, Row.next_request_at, Row.next_token_at, Row.paused_until)
    )
    row = (await session.execute(statement)).first()
    if row is None:
        return None
    return row[0], Bucket(row[1], row[2], row[3])


async def _with_in_flight(
    session: AsyncSession, budget_id: int, bucket: Bucket, now: datetime
) -> Bucket:
    """The bucket with its live leases counted, once the expired ones are deleted (a dead
    process's calls stop counting when their leases expire)."""
    leases = ProviderBudgetLease
    expired = (leases.budget_id == budget_id, leases.expires_at <= now)
    await session.execute(delete(leases).where(*expired))
    count = select(func.count()).select_from(leases).where(leases.budget_id == budget_id)
    live = int((await session.execute(count)).scalar_one())
    return Bucket(bucket.next_request_at, bucket.next_token_at, bucket.paused_until, live)


async def _lease(session: AsyncSession, budget_id: int, owner: str, expires: datetime) -> int:
    values = {"budget_id": budget_id, "owner": owner, "expires_at": expires}
    statement = insert(ProviderBudgetLease).values(values).returning(ProviderBudgetLease.id)
    return int((await session.execute(statement)).scalar_one())
