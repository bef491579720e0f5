"""Putting a recorded outcome in the review queue, in the same transaction that records it.

Every `needs_review` outcome is queued with its reasons. A `passed` or `flagged` outcome is
queued as an audit with probability FAITHSCREEN_AUDIT_RATE: audits are how the false-pass
rate gets measured. A new item needs two people's decisions with probability
FAITHSCREEN_REVIEW_DOUBLE_RATE (default 0: a team of one is never stuck), which measures
whether people agree. One pair, one question: a screening whose pair has an unresolved
item joins it instead (repositories/queue_items.add_many). The random source is a
parameter so tests can fix it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from app.repositories import queue_items
from app.repositories.queue_items import NewQueueItem
from app.vocabulary import Outcome

# Returns a float in [0, 1), like random.random.
Rng = Callable[[], float]


def queue_as(outcome: str, *, audit_rate: float, rng: Rng) -> Literal["review", "audit"] | None:
    """Whether this outcome goes to a person, and why; None when it does not."""
    if Outcome(outcome) is Outcome.NEEDS_REVIEW:
        return "review"
    # Drawn only for outcomes that may be sampled, so a fixed sequence maps to them alone.
    return "audit" if rng() < audit_rate else None


def queue_item(
    screening_id: str,
    outcome: str,
    reasons: Sequence[str],
    batch_id: str | None,
    *,
    audit_rate: float,
    double_rate: float = 0.0,
    rng: Rng = random.random,
) -> NewQueueItem | None:
    """The queue item this outcome calls for, or None (see `queue_as`). Double review is
    drawn after the audit, and only at a rate above 0 (so a fixed sequence of draws means
    the same audits whatever the double rate)."""
    kind = queue_as(outcome, audit_rate=audit_rate, rng=rng)
    if kind is None:
        return None
    return NewQueueItem(
        screening_id=screening_id,
        reasons=list(reasons),
        audit=kind == "audit",
        batch_id=batch_id,
        double_review=double_rate > 0 and rng() < double_rate,
    )


async def queue_for_review(
    session: AsyncSession,
    screening_id: str,
    outcome: str,
    reasons: Sequence[str],
    *,
    audit_rate: float,
    double_rate: float = 0.0,
    rng: Rng = random.random,
) -> bool:
    """Queue the screening if its outcome calls for it; True if it now waits on an item
    (a new one, or its pair's unresolved one), False if not queued or already waiting
    (a re-run job, say)."""
    batch_id = await queue_items.batch_of(session, screening_id)
    new = queue_item(
        screening_id,
        outcome,
        reasons,
        batch_id,
        audit_rate=audit_rate,
        double_rate=double_rate,
        rng=rng,
    )
    return new is not None and await queue_items.add(session, new)


class DecidedScreening(Protocol):
    """A new screening as bulk intake stores it (repositories.screenings.NewScreening)."""

    @property
    def id(self) -> str: ...
    @property
    def outcome(self) -> str | None: ...
    @property
    def reasons(self) -> Sequence[str]: ...
    @property
    def batch_id(self) -> str | None: ...


async def queue_many(
    session: AsyncSession,
    decided: Iterable[DecidedScreening],
    *,
    audit_rate: float,
    double_rate: float = 0.0,
    rng: Rng = random.random,
) -> int:
    """Bulk `queue_for_review` for new screenings (those without an outcome are skipped);
    returns how many now wait on an item."""
    items = (
        queue_item(
            s.id,
            s.outcome,
            s.reasons,
            s.batch_id,
            audit_rate=audit_rate,
            double_rate=double_rate,
            rng=rng,
        )
        for s in decided
        if s.outcome is not None
    )
    return await queue_items.add_many(session, [item for item in items if item is not None])
