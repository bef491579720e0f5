"""API keys: storing one (by its hash), finding an active one, listing, revoking, and
noting when a key was last used."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import func, or_, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models.api_key import AccessRole, ApiKey
from app.repositories.conflicts import insert_unless_exists

# `last_used_at` is written at most this often per key: reading a key costs one indexed
# SELECT per request, and a write per request would serialize every request on SQLite.
LAST_USED_RESOLUTION = timedelta(minutes=1)


async def add(
    session: AsyncSession, *, name: str, role: AccessRole, key_hash: str, key_prefix: str
) -> bool:
    """Store a key; False (nothing stored) if a key, revoked or not, has this name."""
    values = {"name": name, "role": role, "key_hash": key_hash, "key_prefix": key_prefix}
    return await insert_unless_exists(session, ApiKey, values, ["name"])


async def find_active(session: AsyncSession, key_hash: str) -> ApiKey | None:
    """The unrevoked key with this hash."""
    statement = select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
    return (await session.execute(statement)).scalar_one_or_none()


async def touch(session: AsyncSession, key: ApiKey, *, now: datetime | None = None) -> bool:
    """Set `last_used_at` unless it was set within LAST_USED_RESOLUTION; True if written."""
    now = now or utcnow()
    stale_before = now - LAST_USED_RESOLUTION
    if key.last_used_at is not None and key.last_used_at > stale_before:
        return False
    statement = (
        update(ApiKey)
        .where(
            ApiKey.id == key.id,
            or_(ApiKey.last_used_at.is_(None), ApiKey.last_used_at <= stale_before),
        )
        .values(last_used_at=now)
        .execution_options(synchronize_session=False)
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


async def get_by_name(session: AsyncSession, name: str) -> ApiKey | None:
    statement = select(ApiKey).where(ApiKey.name == name).execution_options(populate_existing=True)
    return (await session.execute(statement)).scalar_one_or_none()


async def list_all(session: AsyncSession) -> list[ApiKey]:
    """Every key, revoked ones included, oldest first."""
    statement = select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)
    return list((await session.execute(statement)).scalars())


async def count(session: AsyncSession) -> int:
    """Keys of any state: zero only before the first key was ever created."""
    return int((await session.execute(select(func.count()).select_from(ApiKey))).scalar_one())


async def revoke(session: AsyncSession, name: str, *, now: datetime | None = None) -> bool:
    """Revoke the named key; False if there is no such unrevoked key."""
    statement = (
        update(ApiKey)
        .where(ApiKey.name == name, ApiKey.revoked_at.is_(None))
        .values(revoked_at=now or utcnow())
        .execution_options(synchronize_session=False)
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1
