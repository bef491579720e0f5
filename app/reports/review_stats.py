"""Per-person review statistics for /review/stats (pure: decision rows in, rows out): how
many decisions each person made, the median seconds they spent on an item (from when they
first opened it, on the page or over the API, to their decision: not from the claim, which
deciding on the page takes the moment it decides), how often they were unsure, and how
often they agreed with the other person on the double-reviewed items they were one of the
two on.

Acts are counted as in reviewers.py: one per decision, a withdrawn one not at all.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.reports.reviewers import AGREEMENT_MIN_ITEMS, DECISION, acts, double_review_pairs
from app.repositories.report_rows import DecisionFact

UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class PersonStats:
    """One person's decisions (`unsure` among them; adjudications apart). The median and the
    rates are None where there is nothing to take them over: no decision with an opening, no
    decision, or fewer than AGREEMENT_MIN_ITEMS double-reviewed items."""

    actor: str
    decisions: int
    faithful: int
    mismatch: int
    unsure: int
    unsure_rate: float | None
    median_seconds: float | None
    withdrawn: int
    adjudications: int
    double_reviewed: int
    agreed: int
    agreement: float | None


def person_stats(facts: Sequence[DecisionFact]) -> list[PersonStats]:
    """A row per person who decided, withdrew or adjudicated, by name."""
    standing = acts(facts)
    mine: dict[str, list[DecisionFact]] = defaultdict(list)
    for fact in standing:
        mine[fact.actor].append(fact)
    withdrawn: dict[str, int] = defaultdict(int)
    for fact in facts:
        if fact.withdraws_id is not None:
            withdrawn[fact.actor] += 1
    together = _double_reviews(facts)
    people = sorted(set(mine) | set(withdrawn))
    return [_person(p, mine[p], withdrawn[p], together.get(p, [])) for p in people]


def _double_reviews(facts: Iterable[DecisionFact]) -> dict[str, list[bool]]:
    """Per person, whether they agreed with the other, for each double review they were in."""
    agreed: dict[str, list[bool]] = defaultdict(list)
    for first, second in double_review_pairs(facts):
        same = first.decision == second.decision
        agreed[first.actor].append(same)
        agreed[second.actor].append(same)
    return agreed


def _person(
    actor: str, standing: Sequence[DecisionFact], withdrawn: int, together: Sequence[bool]
) -> PersonStats:
    decided = [f for f in standing if f.kind == DECISION]
    values = [f.decision for f in decided]
    unsure = values.count(UNSURE)
    return PersonStats(
        actor=actor,
        decisions=len(decided),
        faithful=values.count("faithful"),
        mismatch=values.count("mismatch"),
        unsure=unsure,
        unsure_rate=unsure / len(decided) if decided else None,
        median_seconds=_median_seconds(decided),
        withdrawn=withdrawn,
        adjudications=len(standing) - len(decided),
        double_reviewed=len(together),
        agreed=sum(together),
        agreement=sum(together) / len(together) if len(together) >= AGREEMENT_MIN_ITEMS else None,
    )


def _median_seconds(decided: Iterable[DecisionFact]) -> float | None:
    spent = [
        max(0.0, (f.created_at - f.opened_at).total_seconds())
        for f in decided
        if f.opened_at is not None
    ]
    return statistics.median(spent) if spent else None
