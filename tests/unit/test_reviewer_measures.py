"""People's decisions as measures, on small examples worked by hand: agreement and Cohen's
kappa between the two people of double-reviewed items (null below 2 items), which defects
were named on the mismatches by outcome, pairs decided both ways, and per-person
statistics (decisions, median seconds per item, unsure rate, agreement)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import count

import pytest

from app.reports.html import summary_html
from app.reports.review_stats import person_stats
from app.reports.reviewers import (
    conflicting_pairs,
    defect_counts,
    double_review_pairs,
    people_measures,
    reviewer_agreement,
)
from app.reports.summary import Aggregates, summarize
from app.reports.text import summary_text
from app.repositories.report_rows import DecidedScreening, DecisionFact

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
_ids = count(1)


def fact(item: int, actor: str, decision: str | None, **extra: object) -> DecisionFact:
    """A `decision` row of `item` (another kind through `kind=`), ids in creation order."""
    row_id = next(_ids)
    values: dict[str, object] = {
        "kind": "decision",
        "created_at": T0 + timedelta(minutes=row_id),
        "double_review": True,
    } | extra
    return DecisionFact(row_id, item, decision=decision, actor=actor, **values)  # type: ignore[arg-type]


def double(*labels: tuple[str, str]) -> list[DecisionFact]:
    """One double-review item per (first, second) pair of decisions, by ann then bo."""
    rows = []
    for item, (first, second) in enumerate(labels, start=1):
        rows += [fact(item, "ann", first), fact(item, "bo", second)]
    return rows


def test_agreement_and_kappa_over_four_items_match_the_hand_count() -> None:
    # Observed 3/4; ann F 3 M 1, bo F 2 M 2: chance (3*2 + 1*2)/16 = 0.5; kappa 0.5.
    rows = double(("faithful", "faithful"), ("faithful", "faithful"), ("mismatch", "mismatch"),
                  ("faithful", "mismatch"))  # fmt: skip
    measured = reviewer_agreement(double_review_pairs(rows))
    assert (measured.double_reviewed, measured.agreed) == (4, 3)
    assert measured.agreement == 0.75 and measured.kappa == pytest.approx(0.5)


def test_total_disagreement_is_kappa_minus_one() -> None:
    rows = double(("faithful", "mismatch"), ("mismatch", "faithful"))
    measured = reviewer_agreement(double_review_pairs(rows))
    assert (measured.agreed, measured.agreement) == (0, 0.0)
    assert measured.kappa == pytest.approx(-1.0)


def test_below_two_items_the_rate_and_kappa_are_null() -> None:
    one = reviewer_agreement(double_review_pairs(double(("mismatch", "mismatch"))))
    assert (one.double_reviewed, one.agreed, one.agreement, one.kappa) == (1, 1, None, None)
    none = reviewer_agreement(double_review_pairs([]))
    assert (none.double_reviewed, none.agreement, none.kappa) == (0, None, None)
    # Two items, both people always "faithful": agreement 1, kappa 0/0, so null.
    same = reviewer_agreement(double_review_pairs(double(*[("faithful", "faithful")] * 2)))
    assert (same.agreement, same.kappa) == (1.0, None)


def test_only_two_different_people_standing_decisions_of_double_reviews_pair() -> None:
    first = fact(1, "ann", "mismatch")
    rows = [
        first,
        fact(1, "ann", "faithful"),  # the same person again is no second opinion
        fact(1, "cy", "unsure"),  # a doubt is not a decision
        withdrawn := fact(1, "bo", "faithful"),
        fact(1, "bo", None, kind="withdrawal", withdraws_id=withdrawn.id),
        second := fact(1, "bo", "mismatch"),
        fact(1, "admin", "faithful", kind="adjudication"),
        fact(2, "ann", "faithful", double_review=False),
        fact(2, "bo", "mismatch", double_review=False),
        fact(3, "ann", "faithful"),  # awaiting its second decision
    ]
    assert double_review_pairs(rows) == [(first, second)]


def test_rows_of_one_act_count_once() -> None:
    # An item answering for two screenings may record one decision once per screening.
    a = fact(1, "ann", "faithful")
    twin = DecisionFact(a.id + 1000, 1, "decision", "faithful", "ann", a.created_at,
                        double_review=True)  # fmt: skip
    b = fact(1, "bo", "mismatch")
    assert double_review_pairs([a, twin, b]) == [(a, b)]
    [ann, bo] = person_stats([a, twin, b])
    assert (ann.actor, ann.decisions, bo.decisions) == ("ann", 1, 1)


def screening(
    n: int, outcome: str, final: str | None, item: int, pair: int = 0
) -> DecidedScreening:
    return DecidedScreening(f"s{n}", pair or n, outcome, final, item)


def test_defects_are_counted_by_outcome_on_the_acts_that_decided_mismatch() -> None:
    rows = [
        fact(1, "ann", "mismatch", defects=("dropped_hypothesis", "wrong_type")),
        fact(2, "ann", "mismatch", defects=("dropped_hypothesis",)),
        # Decided before a reopen: the current decision named another defect.
        fact(3, "ann", "mismatch", defects=("vacuous",)),
        fact(3, "admin", None, kind="reopen"),
        fact(3, "bo", "mismatch", defects=("wrong_constant",)),
        # A disputed double review: the faithful side names nothing, the adjudication adds.
        fact(4, "ann", "faithful"),
        fact(4, "bo", "mismatch", defects=("extra_hypothesis",)),
        fact(4, "admin", "mismatch", kind="adjudication", defects=("wrong_quantifier",)),
        fact(5, "ann", "mismatch", defects=("other",)),  # decided faithful at last: not counted
        fact(6, "ann", "mismatch"),  # a note, no defect
    ]
    screenings = [
        screening(1, "passed", "mismatch", 1),
        screening(2, "passed", "mismatch", 2),
        screening(3, "flagged", "mismatch", 3),
        screening(4, "passed", "mismatch", 4),
        screening(5, "passed", "faithful", 5),
        screening(6, "needs_review", "mismatch", 6),
        screening(7, "passed", None, 7),
    ]
    counted = defect_counts(screenings, rows)
    assert counted.mismatches == {"flagged": 1, "needs_review": 1, "passed": 3}
    assert counted.by_outcome == {
        "flagged": {"wrong_constant": 1},
        "needs_review": {},
        "passed": {
            "dropped_hypothesis": 2,
            "extra_hypothesis": 1,
            "wrong_quantifier": 1,
            "wrong_type": 1,
        },
    }


def test_a_pair_decided_both_ways_is_one_conflict() -> None:
    screenings = [
        screening(1, "passed", "faithful", 1, pair=10),
        screening(2, "passed", "mismatch", 2, pair=10),
        screening(3, "passed", "mismatch", 3, pair=10),
        screening(4, "flagged", "mismatch", 4, pair=11),
        screening(5, "flagged", "mismatch", 5, pair=11),
        screening(6, "flagged", None, 6, pair=12),
        screening(7, "flagged", "faithful", 7, pair=12),
    ]
    assert conflicting_pairs(screenings) == 1


def test_person_stats_count_decisions_median_seconds_unsure_and_agreement() -> None:
    rows = [
        # Claimed a second before deciding (as the page does): time runs from the opening.
        DecisionFact(1, 1, "decision", "faithful", "ann", T0 + timedelta(seconds=30),
                     opened_at=T0, claimed_at=T0 + timedelta(seconds=29), double_review=True),
        DecisionFact(2, 1, "decision", "faithful", "bo", T0 + timedelta(seconds=90),
                     opened_at=T0, double_review=True),
        DecisionFact(3, 2, "decision", "mismatch", "ann", T0 + timedelta(seconds=10),
                     opened_at=T0, double_review=True),
        DecisionFact(4, 2, "decision", "faithful", "bo", T0 + timedelta(seconds=200),
                     opened_at=T0 + timedelta(seconds=100), double_review=True),
        DecisionFact(5, 3, "decision", "unsure", "ann", T0 + timedelta(seconds=50),
                     opened_at=T0),
        DecisionFact(6, 4, "decision", "mismatch", "bo", T0 + timedelta(seconds=5)),
        DecisionFact(7, 4, "withdrawal", None, "bo", T0 + timedelta(seconds=6),
                     withdraws_id=6),
        DecisionFact(8, 5, "adjudication", "mismatch", "root", T0),
    ]  # fmt: skip
    ann, bo, root = person_stats(rows)
    assert (ann.actor, ann.decisions, ann.unsure, ann.unsure_rate) == ("ann", 3, 1, 1 / 3)
    # ann's seconds: 30, 10, 50 -> median 30; bo's standing ones: 90, 100 -> 95.
    assert ann.median_seconds == 30 and bo.median_seconds == 95
    assert (ann.double_reviewed, ann.agreed, ann.agreement) == (2, 1, 0.5)
    assert (bo.decisions, bo.withdrawn, bo.double_reviewed, bo.agreement) == (2, 1, 2, 0.5)
    assert (root.decisions, root.adjudications, root.unsure_rate) == (0, 1, None)
    assert root.median_seconds is None and root.agreement is None


def test_the_text_and_html_reports_show_agreement_defects_and_conflicts() -> None:
    rows = double(("faithful", "faithful"), ("mismatch", "mismatch"), ("faithful", "mismatch"))
    rows.append(fact(4, "ann", "mismatch", defects=("dropped_hypothesis", "wrong_type")))
    decided = [screening(4, "passed", "mismatch", 4), screening(5, "flagged", "faithful", 5, 4)]
    people = people_measures(decided, rows)
    summary = summarize([], [], Aggregates(people=people))
    text = summary_text(summary)
    assert "Reviewer agreement: 2 of 3 double-reviewed items agreed (66.7%), kappa 0.400" in text
    assert "Conflicts: 1 pair decided both faithful and mismatch over time" in text
    assert "decided mismatch    1       0        0" in text
    assert "dropped_hypothesis  1       0        0" in text
    page = summary_html(summary, filters={}, generated_at=T0)
    assert "2 of 3 double-reviewed items agreed (66.7%), kappa 0.400" in page
    assert "<td>wrong_type</td><td>1</td><td>0</td><td>0</td>" in page
    empty = summary_text(summarize([], []))
    assert "0 of 0 double-reviewed items agreed (too few for a rate)" in empty
    assert "(no mismatch decided)" in empty and "No mismatch decided." in summary_html(
        summarize([], []), filters={}, generated_at=T0
    )
