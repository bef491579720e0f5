"""What people did with the review queue, for the summary report (pure): how the
`needs_review` screenings were decided, reason by reason. The backlog still waiting is
counted by the database (repositories/report_rows.py: Backlog).

A screening's decision is its `final_decision`: the latest decision in its trail, or none
when an admin reopened it since (it is waiting again).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.reports.reasons import counted_reasons
from app.reports.stats import Rate
from app.vocabulary import Verdict

FAITHFUL, MISMATCH = Verdict.FAITHFUL, Verdict.MISMATCH


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
