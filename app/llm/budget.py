"""When a call may start under a provider's budget: pure arithmetic on the stored row.

A token bucket in its virtual-scheduling form (GCRA, no burst): the row keeps when the
budget is next free. A request moves `next_request_at` on by 60/rpm seconds, a call's
tokens move `next_token_at` on by tokens * 60/tpm seconds, and a call starts no earlier
than either (less an interactive call's tolerance, below), nor than a provider's pause.
So any window of W seconds holds at most W * rpm/60 + 1 requests, and W * tpm/60 tokens
plus one call's, plus what interactive calls' tolerance lets in: at most what a provider
holding one second of its limit accepts. A call's tokens are estimated when it starts
and the difference to its reported `usage` is settled after.

Who may reserve how far ahead: a `batch` call only a start within BATCH_AHEAD_SECONDS of
now (further off it is told `Later` and asks again then), an interactive one up to the
whole horizon. So batch reservations never pile up seconds ahead of the clock, and an
interactive call finds the next free start near now. The limits themselves are the same.

Who may take the last calls in flight: with `max_in_flight` of 2 or more, a batch call is
admitted only while fewer than `max_in_flight - reserve` calls (of either kind) are in
flight, where reserve = max(1, max_in_flight // 10) (`interactive_reserve`); an
interactive call may take any slot. So batch work never holds every slot, and an
interactive call finds one free without waiting for a batch call to end.

Who may start before the next free start: an interactive call, by a tolerance per limit
(`interactive_tolerance`): as much as batch reservations hold the schedule ahead of the
clock (BATCH_AHEAD_SECONDS plus one interval), but never so much that its burst could
exceed what a provider holding one second of its limit accepts, less one call
(BURST_SECONDS - 2 intervals; none at 120 requests a minute or fewer). The schedule still
moves on by a whole interval from where it stood, so the long-run rate is the limit's and
batch calls start that much later: a GCRA with that tolerance is a token bucket of
1 + tolerance / interval calls, which a provider's bucket of one second's calls holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

REQUESTS = "shared budget: requests per minute"
TOKENS = "shared budget: tokens per minute"
IN_FLIGHT = "shared budget: calls in flight"
# How far ahead of now a batch call may reserve its start. 1 s until the scale bench showed
# a quarter second keeps the provider as busy (0.988 of the limit, against 0.986) while a
# single's p95 fell from 3.31 s to 2.47 s (docs/performance.md).
BATCH_AHEAD_SECONDS = 0.25
# The window a provider's per-minute limit is taken to be enforced over at its strictest
# (a provider that quantizes 720 requests a minute to 12 a second; bench/limited_provider.py).
BURST_SECONDS = 1.0


def interactive_tolerance(interval: float) -> float:
    """How long before a limit's next free start an interactive call may start, for a
    limit whose one call takes `interval` seconds of it (60/rpm; tokens * 60/tpm)."""
    return max(0.0, min(BATCH_AHEAD_SECONDS + interval, BURST_SECONDS - 2 * interval))


def reserved_for_interactive(slots: int) -> int:
    """Of `slots` (calls in flight, a worker's screenings), those batch work leaves to
    interactive work: max(1, a tenth), none of a single slot (batch work could never run)."""
    return max(1, slots // 10) if slots >= 2 else 0


def ahead_for(batch: bool, horizon: float) -> float:
    """How far ahead of now a call may reserve: a batch call BATCH_AHEAD_SECONDS at most."""
    return min(horizon, BATCH_AHEAD_SECONDS) if batch else horizon


@dataclass(frozen=True, slots=True)
class Budget:
    """One provider's limits (0: none), as configured (FAITHSCREEN_<ROLE>_...)."""

    requests_per_minute: int = 0
    tokens_per_minute: int = 0
    max_in_flight: int = 0

    @property
    def interactive_reserve(self) -> int:
        """The calls in flight batch calls leave to interactive ones."""
        return reserved_for_interactive(self.max_in_flight)

    def in_flight_limit(self, batch: bool) -> int:
        """How many calls may be in flight when a call asks (0: no limit)."""
        return self.max_in_flight - self.interactive_reserve if batch else self.max_in_flight

    @property
    def unlimited(self) -> bool:
        return not (self.requests_per_minute or self.tokens_per_minute or self.max_in_flight)

    def strictest(self, other: Budget) -> Budget:
        """Each limit at the lower of the two (a limit of 0 is none, so never the lower)."""
        return Budget(
            _lower(self.requests_per_minute, other.requests_per_minute),
            _lower(self.tokens_per_minute, other.tokens_per_minute),
            _lower(self.max_in_flight, other.max_in_flight),
        )


@dataclass(frozen=True, slots=True)
class Bucket:
    """The stored row as read under its lock, with the leases that still count."""

    next_request_at: datetime
    next_token_at: datetime
    paused_until: datetime | None
    in_flight: int = 0


@dataclass(frozen=True, slots=True)
class Grant:
    """The call may start at `start`; the row moves on to these times."""

    start: datetime
    next_request_at: datetime
    next_token_at: datetime


@dataclass(frozen=True, slots=True)
class Wait:
    """Not before `seconds` from now, longer than a call waits: `limit` is the reason
    (None: a provider's pause, which the provider itself asked for)."""

    seconds: float
    limit: str | None


@dataclass(frozen=True, slots=True)
class Later:
    """The start is within the horizon but further ahead than this call may reserve: ask
    again in `seconds` (when it would be within reach); `limit` as for `Wait`."""

    seconds: float
    limit: str | None


@dataclass(frozen=True, slots=True)
class Busy:
    """Every call in flight the budget allows is taken: try again when one ends."""


def admit(
    bucket: Bucket,
    budget: Budget,
    tokens: int,
    now: datetime,
    horizon: float,
    ahead: float | None = None,
    *,
    batch: bool = False,
) -> Grant | Wait | Later | Busy:
    """Whether a call of `tokens` (estimated) may start within `horizon` seconds of `now`,
    reserving no further than `ahead` seconds (default: the horizon; see `ahead_for`); a
    `batch` call leaves the interactive reserve of the calls in flight free, and an
    interactive one may start up to its tolerance before a limit's next free start."""
    if budget.max_in_flight and bucket.in_flight >= budget.in_flight_limit(batch):
        return Busy()
    start, limit = now, None
    for at, name in _earliest(bucket, budget, tokens, batch=batch):
        if at > start:
            start, limit = at, name
    wait = (start - now).total_seconds()
    if wait > horizon:
        return Wait(wait, limit)
    reach = horizon if ahead is None else min(ahead, horizon)
    if wait > reach:
        return Later(wait - reach, limit)
    return Grant(start, *_moved(bucket, budget, tokens, start))


def _earliest(
    bucket: Bucket, budget: Budget, tokens: int, *, batch: bool
) -> list[tuple[datetime, str | None]]:
    """Each time a limit lets this call start, with the limit's name. A pause has no
    tolerance: the provider asked for it."""
    times: list[tuple[datetime, str | None]] = []
    if bucket.paused_until is not None:
        times.append((bucket.paused_until, None))
    if budget.requests_per_minute:
        interval = 60.0 / budget.requests_per_minute
        times.append((_tolerated(bucket.next_request_at, interval, batch), REQUESTS))
    if budget.tokens_per_minute:
        interval = _token_seconds(tokens, budget).total_seconds()
        times.append((_tolerated(bucket.next_token_at, interval, batch), TOKENS))
    return times


def _tolerated(next_at: datetime, interval: float, batch: bool) -> datetime:
    if batch:
        return next_at
    return next_at - timedelta(seconds=interactive_tolerance(interval))


def _moved(
    bucket: Bucket, budget: Budget, tokens: int, start: datetime
) -> tuple[datetime, datetime]:
    requests, token_time = bucket.next_request_at, bucket.next_token_at
    if budget.requests_per_minute:
        # From where the schedule stood, not from the start: a call that started within
        # its tolerance before it moves it on by a whole interval all the same.
        requests = max(requests, start) + timedelta(seconds=60.0 / budget.requests_per_minute)
    if budget.tokens_per_minute:
        token_time = max(token_time, start) + _token_seconds(tokens, budget)
    return requests, token_time


def settled(next_token_at: datetime, budget: Budget, *, charged: int, used: int) -> datetime:
    """`next_token_at` once a call charged `charged` tokens turned out to use `used`: moved
    back by what it did not use (or on by what it used beyond the estimate)."""
    if not budget.tokens_per_minute:
        return next_token_at
    return next_token_at + _token_seconds(used - charged, budget)


def paused(paused_until: datetime | None, now: datetime, seconds: float) -> datetime:
    """The pause once a provider asked for `seconds` more: never shortened."""
    until = now + timedelta(seconds=seconds)
    return until if paused_until is None or until > paused_until else paused_until


def _token_seconds(tokens: int, budget: Budget) -> timedelta:
    return timedelta(seconds=tokens * 60.0 / budget.tokens_per_minute)


def _lower(a: int, b: int) -> int:
    return min(a, b) if a and b else a or b
