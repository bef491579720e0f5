"""Bounded label values: what a provider reports (its model name) becomes a label, and a
provider can report anything. One 2 MB name would make every scrape megabytes, and a
provider inventing a new name per reply would make a new series each time. So a value is
cut to MAX_LABEL_CHARS (with a mark), and past MAX_DISTINCT values of one label the
least counted fold into OTHER, their counts summed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar, cast

from app.outside_text import CUT_MARK, without_lone_surrogates

MAX_LABEL_CHARS = 128
MAX_DISTINCT = 32
OTHER = "other"

# A series' label values, in the family's label order.
Key = TypeVar("Key", bound=tuple[str, ...])


def bounded(value: str) -> str:
    """`value`, or its start and a mark saying how long it was, in MAX_LABEL_CHARS."""
    value = without_lone_surrogates(value)  # the body is UTF-8
    if len(value) <= MAX_LABEL_CHARS:
        return value
    mark = CUT_MARK.format(len(value))
    return value[: MAX_LABEL_CHARS - len(mark)] + mark


def folded(counts: Mapping[Key, float], position: int) -> dict[Key, float]:
    """`counts` with the label at `position` bounded, and its values past the MAX_DISTINCT
    most counted (ties: the first by name) folded into OTHER; series that meet are summed."""
    cut = _summed(
        (_replaced(key, position, bounded(key[position])), n) for key, n in counts.items()
    )
    totals: dict[str, float] = {}
    for key, n in cut.items():
        totals[key[position]] = totals.get(key[position], 0) + n
    ranked = sorted(totals, key=lambda value: (-totals[value], value))
    kept = set(ranked[:MAX_DISTINCT])
    return _summed(
        (key if key[position] in kept else _replaced(key, position, OTHER), n)
        for key, n in cut.items()
    )


def _replaced(key: Key, position: int, value: str) -> Key:
    return cast(Key, (*key[:position], value, *key[position + 1 :]))


def _summed(items: Iterable[tuple[Key, float]]) -> dict[Key, float]:
    sums: dict[Key, float] = {}
    for key, n in items:
        sums[key] = sums.get(key, 0) + n
    return sums
