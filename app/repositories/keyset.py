"""The cursor of every keyset-paginated listing: the last row's creation time and id, as
URL-safe base64 of `<ISO time>|<id>`.

One encoder and one decoder, so every listing (screenings, batches, the review queue and
its page) refuses the same bad cursors the same way: a ValueError, which the routes answer
with 422 `invalid_cursor`. A cursor is client input: it may decode to anything, so a
time that does not exist in UTC (`0001-01-01T00:00:00+14:00`), an id no column can hold
or a NUL that PostgreSQL refuses to compare is refused here, before any query.
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime

# Integer ids are INTEGER columns: PostgreSQL refuses to compare one with a larger number.
MAX_INTEGER_ID = 2**31 - 1
_NOT_OURS = "not a cursor from this listing"


def encode_cursor(created_at: datetime, key: str | int) -> str:
    raw = f"{created_at.isoformat()}|{key}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """(creation time in UTC, text id). Raises ValueError for a cursor not made here."""
    created_at, key = _parts(cursor)
    if not key or "\x00" in key:
        raise ValueError(_NOT_OURS)
    return created_at, key


def decode_numbered_cursor(cursor: str) -> tuple[datetime, int]:
    """(creation time in UTC, integer id). Raises ValueError for a cursor not made here."""
    created_at, key = _parts(cursor)
    digits = key.isascii() and key.isdigit() and len(key) <= len(str(MAX_INTEGER_ID))
    if not digits or not 0 < int(key) <= MAX_INTEGER_ID:
        raise ValueError(_NOT_OURS)
    return created_at, int(key)


def _parts(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
        stamp, separator, key = raw.partition("|")
        created_at = datetime.fromisoformat(stamp)
        if not separator or created_at.tzinfo is None:
            raise ValueError(_NOT_OURS)
        # Both ends of the calendar have offsets that put the time outside it in UTC.
        return created_at.astimezone(UTC), key
    except (binascii.Error, UnicodeDecodeError, ValueError, OverflowError) as error:
        raise ValueError(_NOT_OURS) from error
