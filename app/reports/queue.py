"""What people did with the review queue, for the summary report (pure): how the
`needs_review` screenings were decided, reason by reason, and the backlog still waiting.

A screening's decision is its `final_decision`: the latest decision in its trail, or none
when an admin reopened it since (it is waiting again).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.reports.reasons import counted_reasons
from app.reports.stats import Rate
from app.vocabulary import Verdict

FAITHFUL, MISMATCH = Verdict.FAITHFUL.value, Verdict.MISMATCH.value


@dataclass(frozen=True, slots=True)
class Resolution:
    """needs_review screenings and what people decided about them; `mismatch_share` is
    over the decided ones."""

    screenings: int
    faithful: int
    mismatch: int
    undecided: int
    mismatch_share: Rate


@dataclass(frozen=True, slots=True)
class Resolutions:
    """All needs_review screenings, and those of each reason (a screening with two reasons
    counts under both, so the reasons add up to more than the total)."""

    total: Resolution
    by_reason: dict[str, Resolution]


@dataclass(slots=True)
class _Decisions:
    faithful: int = 0
    mismatch: int = 0
    undecided: int = 0

    def add(self, decision: str | None) -> None:
        if decision == FAITHFUL:
            self.faithful += 1
        elif decision == MISMATCH:
            self.mismatch += 1
        else:
            self.undecided += 1

    def resolution(self) -> Resolution:
        decided = self.faithful + self.mismatch
        screenings = decided + self.undecided
        share = Rate.of(self.mismatch, decided)
        return Resolution(screenings, self.faithful, self.mismatch, self.undecided, share)


@dataclass(slots=True)
class ResolutionTally:
    """needs_review screenings folded in one at a time (`add`)."""

    _total: _Decisions = field(default_factory=_Decisions)
    _by_reason: defaultdict[str, _Decisions] = field(
        default_factory=lambda: defaultdict(_Decisions)
    )

    def add(self, reasons: Sequence[str], decision: str | None) -> None:
        self._total.add(decision)
        for reason in counted_reasons(reasons):
            self._by_reason[reason].add(decision)

    def resolutions(self) -> Resolutions:
        by_reason = {r: d.resolution() for r, d in sorted(self._by_reason.items())}
        return Resolutions(self._total.resolution(), by_reason)


@dataclass(frozen=True, slots=True)
class WaitingItem:
    item_id: int
    screening_id: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Backlog:
    """Queue items of the report's screenings not resolved as of `as_of`: open (a lapsed
    claim counts as open) or claimed by a reviewer now, and the oldest of them."""

    open: int
    claimed: int
    oldest: WaitingItem | None
    as_of: datetime | None

    @property
    def waiting(self) -> int:
        return self.open + self.claimed

    @property
    def oldest_age_seconds(self) -> float | None:
        """How long the oldest item has waited, at `as_of`."""
        if self.oldest is None or self.as_of is None:
            return None
        return max(0.0, (self.as_of - self.oldest.created_at).total_seconds())


NO_BACKLOG = Backlog(open=0, claimed=0, oldest=None, as_of=None)
