"""The one listing cursor: what it round-trips, and every cursor it refuses (InvalidCursor,
a 422 `invalid_cursor`)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.repositories.keyset import (
    MAX_INTEGER_ID,
    InvalidCursor,
    decode_cursor,
    decode_numbered_cursor,
    encode_cursor,
)

MOMENT = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)


def raw(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def test_a_cursor_round_trips_its_time_in_utc_and_its_id() -> None:
    assert decode_cursor(encode_cursor(MOMENT, "abc-1")) == (MOMENT, "abc-1")
    assert decode_numbered_cursor(encode_cursor(MOMENT, 42)) == (MOMENT, 42)
    elsewhere = MOMENT.astimezone(timezone(timedelta(hours=-5)))
    created_at, _ = decode_cursor(encode_cursor(elsewhere, "x"))
    assert created_at == MOMENT and created_at.utcoffset() == timedelta(0)
    assert decode_numbered_cursor(encode_cursor(MOMENT, MAX_INTEGER_ID))[1] == MAX_INTEGER_ID


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "!!!",
        raw("no separator"),
        raw("2026-12-01T12:30:00|naive"),
        raw("2026-13-01T12:30:00+00:00|bad-month"),
        raw("0001-01-01T00:00:00+14:00|year-0-in-utc"),
        raw("9999-12-31T23:59:59-14:00|year-10000-in-utc"),
        raw("2026-12-01T12:30:00+00:00|"),
        raw("2026-12-01T12:30:00+00:00|a\x00b"),
        base64.urlsafe_b64encode(b"2026-12-01T12:30:00+00:00|\xff").decode(),
    ],
)
def test_text_id_cursors_not_made_here_are_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor, match="not a cursor from this listing") as refused:
        decode_cursor(cursor)
    assert (refused.value.status_code, refused.value.code) == (422, "invalid_cursor")


@pytest.mark.parametrize(
    "key", ["0", "-1", "+5", " 5", "1.0", str(MAX_INTEGER_ID + 1), str(2**63), "9" * 5000, "x"]
)
def test_integer_id_cursors_past_the_column_are_refused(key: str) -> None:
    with pytest.raises(InvalidCursor, match="not a cursor from this listing"):
        decode_numbered_cursor(raw(f"2026-12-01T12:30:00+00:00|{key}"))
