"""When a failed attempt is worth another one, and how long to wait before it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

# Timeouts and conflicts (408, 409), rate limits (429) and server errors are transient;
# any other 4xx will fail the same way again.
_RETRYABLE_4XX = frozenset({408, 409, 429})

BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 30.0
# The longest wait the client does inside one call. A provider asking for more gets a
# ProviderBackoff: the caller frees its worker slot rather than hold it idle for minutes.
MAX_WAIT_SECONDS = 60.0


def is_retryable_status(status: int) -> bool:
    return status in _RETRYABLE_4XX or 500 <= status <= 599


def backoff_delay(retry: int, rng: Callable[[], float]) -> float:
    """Exponential backoff with full jitter before retry number `retry` (1 for the first).

    Full jitter spreads out the many workers that all saw the same failure at once.
    """
    return rng() * min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2.0 ** (retry - 1))


def retry_after_seconds(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a response asks for: `retry-after-ms`, or `Retry-After` in seconds or as
    an HTTP date. None when absent or unreadable (the caller falls back to backoff). It may
    be huge, or infinite ("inf", "1e400"): the caller caps it (`capped_wait`)."""
    if (millis := _number(headers.get("retry-after-ms"))) is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    # Real time, not app.clock: an HTTP date is the provider's wall clock, which tests never move.
    return seconds if seconds is not None else _seconds_until(value, now or datetime.now(UTC))


def capped_wait(asked: float, cap: float) -> float:
    """`asked` (seconds, as `retry_after_seconds` read it) within [0, cap]."""
    return min(max(asked, 0.0), cap)


def _number(value: str | None) -> float | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    # NaN is not a wait; a negative one means "now"; an infinite one is capped by the caller.
    return None if number is None or math.isnan(number) else max(number, 0.0)


def _seconds_until(http_date: str, now: datetime) -> float | None:
    try:
        when = parsedate_to_datetime(http_date)
        if when.tzinfo is None:  # an HTTP date is always GMT
            when = when.replace(tzinfo=UTC)
        return max((when - now).total_seconds(), 0.0)
    # A year or hour of twenty digits overflows; a date past 9999 in UTC too.
    except (TypeError, ValueError, OverflowError):
        return None
