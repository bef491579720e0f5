"""Review-page sessions: opening one (by its token's hash), finding the key behind a live
one, and ending them (signed out, expired, or their key revoked)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Delete, delete, insert, select
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models.api_key import ApiKey
from app.models.web_session import WebSession


async def add(
    session: AsyncSession,
    *,
    token_hash: str,
    api_key_id: int,
    created_at: datetime,
    expires_at: datetime,
) -> None:
    values = {
        "token_hash": token_hash,
        "api_key_id": api_key_id,
        "created_at": created_at,
        "expires_at": expires_at,
    }
    await session.execute(insert(WebSession).values(values))


async def find_key(
    session: AsyncSession, token_hash: str, *, now: datetime | None = None
) -> ApiKey | None:
    """The unrevoked key of the unexpired session with this token hash."""
    statement = (
        select(ApiKey)
        .join(WebSession, WebSession.api_key_id == ApiKey.id)
        .where(
            WebSession.token_hash == token_hash,
            WebSession.expires_at > (now or utcnow()),
            ApiKey.revoked_at.is_(None),
        )
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def remove(session: AsyncSession, token_hash: str) -> bool:
    """End the session with this token hash; False if there was none."""
    statement = delete(WebSession).where(WebSession.token_hash == token_hash)
    return await _deleted(session, statement) == 1


async def remove_expired(session: AsyncSession, *, now: datetime | None = None) -> int:
    statement = delete(WebSession).where(WebSession.expires_at <= (now or utcnow()))
    return await _deleted(session, statement)


async def remove_for_key(session: AsyncSession, api_key_id: int) -> int:
    """End every session of this key (it was revoked)."""
    statement = delete(WebSession).where(WebSession.api_key_id == api_key_id)
    return await _deleted(session, statement)


async def _deleted(session: AsyncSession, statement: Delete) -> int:
    """Rows deleted. No loaded session object to keep in step: none is ever loaded."""
    options = statement.execution_options(synchronize_session=False)
    return cast(CursorResult[Any], await session.execute(options)).rowcount
