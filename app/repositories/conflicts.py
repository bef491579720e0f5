"""INSERT ... ON CONFLICT DO NOTHING, in the dialect of the session's database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from sqlalchemy import Table
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.base import Base


async def insert_unless_exists(
    session: AsyncSession, model: type[Base], values: Mapping[str, Any], conflict: Sequence[str]
) -> bool:
    """Insert one row unless one with the same `conflict` columns exists; True if inserted.

    Race-safe: of two sessions inserting the same key at once, exactly one inserts and the
    other waits for it and then does nothing -- no IntegrityError, no aborted transaction.
    """
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, model.__table__)
    statement = (
        insert(table)
        .values(dict(values))
        .on_conflict_do_nothing(index_elements=conflict)
        # A row comes back only if one was inserted; row counts differ between drivers.
        .returning(*table.primary_key.columns)
    )
    return (await session.execute(statement)).first() is not None
