"""What people's decisions measure (pure: decision rows in, numbers out): whether two people
agree on the double-reviewed items, which defects they named on the mismatches the screen
let through, and how many pairs were decided both ways over time.

A person's *act* is one decision row of an item; an item answering for several screenings
may record it once per screening, so rows of one act (same item, actor, kind, value and
time) count once. A withdrawn decision (undo) is no act. The *current round* of an item is
its trail after its last reopen: what decided the item as it stands.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from app.reports.stats import cohens_kappa
from app.repositories.report_rows import DecidedScreening, DecisionFact

DECISION, REOPEN, ADJUDICATION = "decision", "reopen", "adjudication"
FAITHFUL, MISMATCH = "faithful", "mismatch"
FINAL = (FAITHFUL, MISMATCH)
# Below this many double-reviewed items an agreement rate or a kappa says nothing.
AGREEMENT_MIN_ITEMS = 2


def acts(facts: Iterable[DecisionFact]) -> list[DecisionFact]:
    """The decision and adjudication rows that stand (not withdrawn), one per act, by id."""
    rows = sorted(facts, key=lambda f: f.id)
    withdrawn = {f.withdraws_id for f in rows if f.withdraws_id is not None}
    seen: set[tuple[int, str, str, str | None, datetime]] = set()
    kept = []
    for fact in rows:
        standing = fact.kind in (DECISION, ADJUDICATION) and fact.id not in withdrawn
        if standing and fact.act() not in seen:
            seen.add(fact.act())
            kept.append(fact)
    return kept


def current_round(facts: Iterable[DecisionFact]) -> dict[int, list[DecisionFact]]:
    """Each item's standing acts since its last reopen, oldest first."""
    rows = sorted(facts, key=lambda f: f.id)
    last_reopen = {f.queue_item_id: f.id for f in rows if f.kind == REOPEN}
    by_item: dict[int, list[DecisionFact]] = defaultdict(list)
    for fact in acts(rows):
        if fact.id > last_reopen.get(fact.queue_item_id, 0):
            by_item[fact.queue_item_id].append(fact)
    return dict(by_item)


def double_review_pairs(facts: Iterable[DecisionFact]) -> list[tuple[DecisionFact, DecisionFact]]:
    """Per double-review item, its first standing final decision and the first one after it
    by another person (items without both are left out), in item order. Adjudications and
    `unsure` are not one of the two."""
    firsts: dict[int, DecisionFact] = {}
    pairs: dict[int, tuple[DecisionFact, DecisionFact]] = {}
    for fact in acts(facts):
        item = fact.queue_item_id
        if not fact.double_review or fact.kind != DECISION or fact.decision not in FINAL:
            continue
        first = firsts.setdefault(item, fact)
        if item not in pairs and fact.actor != first.actor:
            pairs[item] = (first, fact)
    return [pairs[item] for item in sorted(pairs)]


@dataclass(frozen=True, slots=True)
class ReviewerAgreement:
    """Two people on the double-reviewed items: how many, how many agreed, the share that
    agreed and Cohen's kappa (both None below AGREEMENT_MIN_ITEMS items)."""

    double_reviewed: int
    agreed: int
    agreement: float | None
    kappa: float | None


def reviewer_agreement(pairs: Sequence[tuple[DecisionFact, DecisionFact]]) -> ReviewerAgreement:
    labels = [(first.decision, second.decision) for first, second in pairs]
    agreed = sum(1 for a, b in labels if a == b)
    if len(labels) < AGREEMENT_MIN_ITEMS:
        return ReviewerAgreement(len(labels), agreed, None, None)
    return ReviewerAgreement(len(labels), agreed, agreed / len(labels), cohens_kappa(labels))


NO_AGREEMENT = ReviewerAgreement(0, 0, None, None)


@dataclass(frozen=True, slots=True)
class DefectCounts:
    """Per outcome: the screenings people decided mismatch, and how many of them had each
    defect named (on the acts that decided it). A screening with two defects counts under
    both; one whose decision named none counts under none."""

    mismatches: dict[str, int] = field(default_factory=dict)
    by_outcome: dict[str, dict[str, int]] = field(default_factory=dict)


def defect_counts(
    screenings: Iterable[DecidedScreening], facts: Iterable[DecisionFact]
) -> DefectCounts:
    rounds = current_round(facts)
    mismatches: Counter[str] = Counter()
    by_outcome: dict[str, Counter[str]] = defaultdict(Counter)
    for screening in screenings:
        if screening.final_decision != MISMATCH or screening.outcome is None:
            continue
        mismatches[screening.outcome] += 1
        deciding = rounds.get(screening.queue_item_id, [])
        named = {d for f in deciding if f.decision == MISMATCH for d in f.defects}
        by_outcome[screening.outcome].update(named)
    return DefectCounts(
        mismatches=dict(sorted(mismatches.items())),
        by_outcome={o: dict(sorted(c.items())) for o, c in sorted(by_outcome.items())},
    )


def conflicting_pairs(screenings: Iterable[DecidedScreening]) -> int:
    """Pairs whose screenings were finally decided both faithful and mismatch (one pair
    asked again later, say, and answered the other way)."""
    finals: Mapping[int, set[str]] = _finals_by_pair(screenings)
    return sum(1 for values in finals.values() if len(values) > 1)


def _finals_by_pair(screenings: Iterable[DecidedScreening]) -> dict[int, set[str]]:
    finals: dict[int, set[str]] = defaultdict(set)
    for screening in screenings:
        if screening.final_decision in FINAL:
            finals[screening.pair_id].add(screening.final_decision)
    return finals


@dataclass(frozen=True, slots=True)
class PeopleMeasures:
    """What the summary report says about people's decisions."""

    reviewer_agreement: ReviewerAgreement = NO_AGREEMENT
    defects: DefectCounts = field(default_factory=DefectCounts)
    conflicts: int = 0


def people_measures(
    screenings: Sequence[DecidedScreening], facts: Sequence[DecisionFact]
) -> PeopleMeasures:
    return PeopleMeasures(
        reviewer_agreement=reviewer_agreement(double_review_pairs(facts)),
        defects=defect_counts(screenings, facts),
        conflicts=conflicting_pairs(screenings),
    )
