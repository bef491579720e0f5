"""Keyset pagination for every listing (screenings, batches, the review queue and its page,
decision conflicts): the cursor, the condition past it, and one page of rows.

A cursor is the last row's creation time and id, as URL-safe base64 of `<ISO time>|<id>`.
One encoder, one decoder and one error, so every listing refuses the same bad cursors the
same way: `InvalidCursor`, a 422 `invalid_cursor`. A cursor is client input: it may decode
to anything, so a time that does not exist in UTC (`0001-01-01T00:00:00+14:00`), an id no
column can hold or a NUL that PostgreSQL refuses to compare is refused here, before any
query.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from sqlalchemy import ColumnElement, Select, and_, or_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.sql.elements import UnaryExpression

from app.errors import AppError

# Integer ids are INTEGER columns: PostgreSQL refuses to compare one with a larger number.
MAX_INTEGER_ID = 2**31 - 1
_NOT_OURS = "not a cursor from this listing"


class InvalidCursor(AppError):
    """A cursor this service did not make (or made for an id no listing can hold)."""

    def __init__(self) -> None:
        super().__init__(422, "invalid_cursor", f"cursor: {_NOT_OURS}")


class Keyed(Protocol):
    """A row a listing pages through: ordered by creation time, ties broken by id."""

    @property
    def created_at(self) -> datetime: ...

    @property
    def id(self) -> str | int: ...


Row = TypeVar("Row", bound=Keyed)


@dataclass(frozen=True, slots=True)
class Order:
    """How a listing is ordered: its two key columns, which way, and whether its ids are
    integers (which decide what a valid cursor may hold)."""

    created_at: InstrumentedAttribute[datetime]
    id: InstrumentedAttribute[Any]
    newest_first: bool
    numbered: bool

    def past(self, cursor: str) -> ColumnElement[bool]:
        """The rows strictly after the cursor's row in this order."""
        created_at, key = decode_numbered_cursor(cursor) if self.numbered else decode_cursor(cursor)
        if self.newest_first:
            return or_(
                self.created_at < created_at, and_(self.created_at == created_at, self.id < key)
            )
        return or_(self.created_at > created_at, and_(self.created_at == created_at, self.id > key))

    def by(self) -> tuple[UnaryExpression[Any], UnaryExpression[Any]]:
        if self.newest_first:
            return self.created_at.desc(), self.id.desc()
        return self.created_at.asc(), self.id.asc()


async def page(
    session: AsyncSession,
    statement: Select[Row],
    order: Order,
    *,
    cursor: str | None,
    limit: int,
) -> tuple[list[Row], str | None]:
    """One page of the statement's rows in `order`, after `cursor`, and the next page's
    cursor (None on the last). Raises InvalidCursor for a cursor not made here."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if cursor is not None:
        statement = statement.where(order.past(cursor))
    # One row more than the page says whether there is a next one.
    rows = list((await session.execute(statement.order_by(*order.by()).limit(limit + 1))).scalars())
    shown = rows[:limit]
    return shown, encode_cursor(shown[-1].created_at, shown[-1].id) if len(rows) > limit else None


def encode_cursor(created_at: datetime, key: str | int) -> str:
    raw = f"{created_at.isoformat()}|{key}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """(creation time in UTC, text id). Raises InvalidCursor for a cursor not made here."""
    created_at, key = _parts(cursor)
    if not key or "\x00" in key:
        raise InvalidCursor
    return created_at, key


def decode_numbered_cursor(cursor: str) -> tuple[datetime, int]:
    """(creation time in UTC, integer id). Raises InvalidCursor for a cursor not made here."""
    created_at, key = _parts(cursor)
    digits = key.isascii() and key.isdigit() and len(key) <= len(str(MAX_INTEGER_ID))
    if not digits or not 0 < int(key) <= MAX_INTEGER_ID:
        raise InvalidCursor
    return created_at, int(key)


def _parts(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
        stamp, separator, key = raw.partition("|")
        created_at = datetime.fromisoformat(stamp)
        if not separator or created_at.tzinfo is None:
            raise InvalidCursor
        # Both ends of the calendar have offsets that put the time outside it in UTC.
        return created_at.astimezone(UTC), key
    except (binascii.Error, UnicodeDecodeError, ValueError, OverflowError) as error:
        raise InvalidCursor from error
