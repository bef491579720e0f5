"""Single screenings' Idempotency-Keys (screening_keys), each in its API key's scope (the
key's name): find one still in its window, take one (a new key, or one whose window has
passed)."""

from __future__ import annotations

from datetime import datetime
from typing import cast

from sqlalchemy import Table, delete, select, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.models.screening_key import ScreeningKey


async def find(
    session: AsyncSession, scope: str, key: str, *, since: datetime
) -> ScreeningKey | None:
    """`scope`'s row for the key if it was taken at `since` or later; None otherwise."""
    statement = select(ScreeningKey).where(
        ScreeningKey.scope == scope,
        ScreeningKey.idempotency_key == key,
        ScreeningKey.created_at >= since,
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def take(
    session: AsyncSession,
    scope: str,
    key: str,
    screening_id: str,
    body_sha256: str,
    *,
    since: datetime,
) -> bool:
    """Hold `key` in `scope` for `screening_id`: a new row, or the row of a key taken before `since`
    (its window has passed) made over. False, changing nothing, when the key is held in
    its window. Race-safe as repositories.conflicts.insert_unless_exists: of two sessions
    taking one key, the second waits for the first to commit and then finds it held."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, ScreeningKey.__table__)
    held = ("scope", "idempotency_key")
    values = {
        "scope": scope,
        "idempotency_key": key,
        "screening_id": screening_id,
        "body_sha256": body_sha256,
        "created_at": utcnow(),
    }
    new = insert(table).values(values)
    statement = new.on_conflict_do_update(
        index_elements=list(held),
        set_={name: new.excluded[name] for name in values if name not in held},
        where=table.c.created_at < since,
    ).returning(table.c.idempotency_key)
    return (await session.execute(statement)).first() is not None


async def remove_expired(session: AsyncSession, *, since: datetime, limit: int) -> int:
    """Delete up to `limit` keys taken before `since` (oldest first, by the created_at
    index); the number deleted. Rows another transaction holds are skipped (PostgreSQL),
    so concurrent submissions never wait on each other here."""
    held = tuple_(ScreeningKey.scope, ScreeningKey.idempotency_key)
    expired = (
        select(ScreeningKey.scope, ScreeningKey.idempotency_key)
        .where(ScreeningKey.created_at < since)
        .order_by(ScreeningKey.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    )
    statement = (
        delete(ScreeningKey)
        .where(held.in_(expired), ScreeningKey.created_at < since)
        .returning(ScreeningKey.idempotency_key)
    )
    return len((await session.execute(statement)).all())
