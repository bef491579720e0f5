"""Outcomes by tag and screenings per day, for the summary report (pure values).

The database counts both (one row per tag, one per day), so a report over many screenings
holds one count per tag shown and per day, never the screenings themselves. Days are UTC
days of the screenings' creation, the clock every filter uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

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
