"""The one mapping from a ruling to the outcome a screening stores, and that it fits both
rows an outcome is written through (a new screening at intake, a worker's finished one)."""

from __future__ import annotations

import dataclasses

from app.evidence import EVIDENCE_VERSION
from app.evidence.finding import Finding
from app.pipeline.ruling import OutcomeFields, ScreeningRuling
from app.policy import POLICY_VERSION
from app.policy.ruling import Ruling
from app.repositories.screenings import NewOutcome, NewScreening
from app.vocabulary import Outcome, Severity

FINDING = Finding("sorry_in_statement", "the statement uses sorry", Severity.REVIEW, "formal", 1)


def test_a_ruling_maps_to_the_stored_values() -> None:
    ruling = Ruling(Outcome.NEEDS_REVIEW, ("judge_unclear", "evidence_review"), POLICY_VERSION)
    fields = ScreeningRuling(ruling, (FINDING,)).outcome_fields()
    assert fields == {
        "outcome": "needs_review",
        "reasons": ["judge_unclear", "evidence_review"],
        "evidence": [FINDING.as_json()],
        "policy_version": POLICY_VERSION,
        "evidence_version": EVIDENCE_VERSION,
    }
    # The member itself: the column (StrEnumType) stores its value and loads the member.
    assert fields["outcome"] is Outcome.NEEDS_REVIEW


def test_the_fields_are_exactly_those_both_outcome_rows_take() -> None:
    mapped = set(OutcomeFields.__annotations__)
    assert mapped == {f.name for f in dataclasses.fields(NewOutcome)} - {"screening_id"}
    assert mapped <= {f.name for f in dataclasses.fields(NewScreening)}
