"""What the summary report's queries return, as plain values: the rows they stream and
what the database counts itself. Defined here, below app/reports, so the report's tally and
renderings (pure) and the queries (repositories/reports.py, review_measures.py) share them
without app/repositories importing app/reports.

Outcomes by tag and screenings per day: the database counts both (one row per tag, one per
day), so a report over many screenings holds one count per tag shown and per day, never
the screenings themselves. Days are UTC days of the screenings' creation, the clock every
filter uses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

# ---- Rows streamed -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScreeningRow:
    id: str
    outcome: str | None
    reasons: Sequence[str]
    final_decision: str | None
    audit: bool


@dataclass(frozen=True, slots=True)
class ReviewRow:
    screening_id: str
    role: str
    attempt: int
    purpose: str
    model: str | None
    prompt_version: str | None
    verdict: str
    parse_status: str
    latency_ms: int | None
    usage: Mapping[str, Any]
    http_status: int | None = None
    # The client supplied the reply: no model, no prompt version, no call.
    supplied: bool = False
    # Which judge ("" for the translator; `judge` for the single judge).
    judge_name: str = ""


# ---- Counted by the database ---------------------------------------------------------------

# Tags shown, most screenings first: the rest are counted, not listed.
TAGS_SHOWN = 100


@dataclass(frozen=True, slots=True)
class TagCount:
    """A tag's screenings by outcome (a screening giving a tag twice counts once)."""

    tag: str
    outcomes: dict[str, int]

    @property
    def screenings(self) -> int:
        return sum(self.outcomes.values())


@dataclass(frozen=True, slots=True)
class TagCounts:
    """The TAGS_SHOWN tags with most screenings (then by name), and how many tags in all."""

    shown: list[TagCount] = field(default_factory=list)
    total: int = 0

    @property
    def not_shown(self) -> int:
        return self.total - len(self.shown)


@dataclass(frozen=True, slots=True)
class DayCount:
    """Screenings created on one UTC day, by outcome; days without any are left out."""

    day: date
    outcomes: dict[str, int]

    @property
    def screenings(self) -> int:
        return sum(self.outcomes.values())


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


# ---- People's decisions (reports/reviewers.py measures them) -------------------------------


@dataclass(frozen=True, slots=True)
class DecisionFact:
    """One row of an item's trail, as the measures need it."""

    id: int
    queue_item_id: int
    kind: str
    decision: str | None
    actor: str
    created_at: datetime
    claimed_at: datetime | None = None
    withdraws_id: int | None = None
    defects: tuple[str, ...] = ()
    double_review: bool = False
    # When the decider first opened the item (None: never, or before openings were kept).
    opened_at: datetime | None = None

    def act(self) -> tuple[int, str, str, str | None, datetime]:
        return self.queue_item_id, self.actor, self.kind, self.decision, self.created_at


@dataclass(frozen=True, slots=True)
class DecidedScreening:
    """A reported screening with a queue item: its outcome, its final decision (None while
    undecided) and the item that answers for it."""

    screening_id: str
    pair_id: int
    outcome: str | None
    final_decision: str | None
    queue_item_id: int
