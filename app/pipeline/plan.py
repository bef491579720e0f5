"""What to ask a role next, given the calls already made for it. Pure.

The plan is a function of the stored reviews alone, so a screening that is re-run after a
crash resumes where it stopped: the calls already stored are not paid for twice.

Rules, in order:
1. The first call is a `review`.
2. The first reading with parse status `ok` is the role's reading, whatever its verdict: an
   answer is never re-asked to get a different one ("fix format, never content").
3. A reading whose status a format retry may repair (missing, invalid, conflicting, bare_cr,
   ambiguous, empty, truncated) is asked again as a `format_retry`, up to `format_retries`
   times. A truncated reply is asked again with `max_tokens` doubled, up to the ceiling.
   Refusals and provider errors are not re-asked here (the client already retried the
   transport); retries exhausted: the last reading stands, with its cause.
4. An `ok` mismatch with `confirmations` k > 0 is re-reviewed by up to k `confirmation`
   calls, stopping at the first that reads mismatch (the mismatch then stands).
5. The role's result is evidential only if every call made for it went to a model marked
   evidential, as each review recorded it (fail closed: a model's setting changed between
   a crash and the resumed run cannot lend its FAITHFUL the other model's weight).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.contract.reading import Reading
from app.policy import RoleResult, confirmations_needed
from app.vocabulary import FORMAT_RETRY_STATUSES, ParseStatus, Purpose


@dataclass(frozen=True, slots=True)
class PastCall:
    """What the plan needs to know of one stored review."""

    attempt: int
    purpose: Purpose
    reading: Reading
    raw_response: str | None
    max_tokens: int | None
    # The model it went to was marked evidential (FAITHSCREEN_*_EVIDENTIAL), as recorded.
    evidential: bool = True


@dataclass(frozen=True, slots=True)
class NextCall:
    attempt: int
    purpose: Purpose
    max_tokens: int
    # The reply a format retry repairs; None for reviews and confirmations.
    retry_of: PastCall | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    format_retries: int
    confirmations: int
    max_tokens: int
    max_tokens_ceiling: int


def plan_next(past: Sequence[PastCall], limits: Limits) -> NextCall | RoleResult:
    primary = [c for c in past if c.purpose is not Purpose.CONFIRMATION]
    if not primary:
        return NextCall(attempt=1, purpose=Purpose.REVIEW, max_tokens=limits.max_tokens)
    chosen = next((c for c in primary if c.reading.parse_status is ParseStatus.OK), None)
    if chosen is None:
        return _format_retry(past, primary, limits) or RoleResult(
            primary[-1].reading, evidential=all_evidential(past)
        )
    return _confirmation(past, chosen.reading, limits)


def _format_retry(
    past: Sequence[PastCall], primary: Sequence[PastCall], limits: Limits
) -> NextCall | None:
    last = primary[-1]
    retries_used = len(primary) - 1
    if last.reading.parse_status not in FORMAT_RETRY_STATUSES:
        return None
    if retries_used >= limits.format_retries:
        return None
    max_tokens = limits.max_tokens
    if last.reading.parse_status is ParseStatus.TRUNCATED:
        asked = last.max_tokens or limits.max_tokens
        max_tokens = max(limits.max_tokens, min(asked * 2, limits.max_tokens_ceiling))
    return NextCall(
        attempt=_next_attempt(past),
        purpose=Purpose.FORMAT_RETRY,
        max_tokens=max_tokens,
        retry_of=last,
    )


def _confirmation(
    past: Sequence[PastCall], reading: Reading, limits: Limits
) -> NextCall | RoleResult:
    repeats = tuple(c.reading for c in past if c.purpose is Purpose.CONFIRMATION)
    needed = confirmations_needed(reading, limits.confirmations)
    confirmed = any(r.is_mismatch for r in repeats)
    if len(repeats) < needed and not confirmed:
        return NextCall(
            attempt=_next_attempt(past), purpose=Purpose.CONFIRMATION, max_tokens=limits.max_tokens
        )
    return RoleResult(reading, repeats, evidential=all_evidential(past))


def all_evidential(past: Sequence[PastCall]) -> bool:
    return all(call.evidential for call in past)


def _next_attempt(past: Sequence[PastCall]) -> int:
    return max((c.attempt for c in past), default=0) + 1
