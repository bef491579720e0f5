"""The application's clock: every reading of wall-clock time goes through `utcnow`.

Claim leases, undo windows, job leases and retry times, key and sign-in expiry are all
measured against it. Tests move it (`advance`) instead of waiting for real time to pass,
so a result never depends on how fast a loaded machine runs between two steps. Time
still flows on a moved clock: only the offset jumps, so pollers and timeouts keep working.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_offset = timedelta(0)


def utcnow() -> datetime:
    """The current time, timezone-aware UTC, plus whatever a test has moved it by."""
    return datetime.now(UTC) + _offset


def advance(by: timedelta) -> None:
    """Move the clock forward (tests only: a running service never calls this)."""
    global _offset
    if by < timedelta(0):
        raise ValueError("the clock only moves forward")
    _offset += by


def reset() -> None:
    """Back to real time (a test's teardown)."""
    global _offset
    _offset = timedelta(0)
