"""Which decisions are final (no undo) and who may adjudicate, with plain values: the rules
of issue 32's items 5 to 7 in app/review_queue/transitions.py."""

from __future__ import annotations

import pytest

from app.auth.principal import Principal
from app.models.api_key import AccessRole
from app.review_queue import transitions
from app.review_queue.choices import Choice
from app.vocabulary import DecisionValue, QueueStatus
from tests.unit.test_review_transitions import T0, Item, Row, refusal

ROOT = Principal("root", AccessRole.ADMIN)
S = QueueStatus


@pytest.mark.parametrize(
    ("status", "double_review", "blind", "undoable"),
    [
        (S.RESOLVED, False, False, True),  # sighted, single: the undo window applies
        (S.RESOLVED, False, True, False),  # blind: resolving it showed the models' answer
        (S.RESOLVED, True, False, False),  # a second decision that agreed
        (S.DISPUTED, True, False, False),  # a second decision that disagreed
        (S.AWAITING_SECOND, True, True, True),  # a first decision: still blind to its author
        (S.OPEN, False, True, True),  # unsure: resolves nothing, tells nothing
        (S.AWAITING_SECOND, True, False, True),  # a second unsure
    ],
)
def test_a_decision_that_settled_what_its_author_could_not_see_is_final(
    status: QueueStatus, double_review: bool, blind: bool, undoable: bool
) -> None:
    assert transitions.withdrawable(status, double_review=double_review, blind=blind) is undoable


def test_undo_refuses_a_final_decision_even_inside_the_window() -> None:
    item = Item(status="resolved", claimed_by=None, audit=True)
    trail = [Row(id=1, actor="alice", blind=True)]
    args = (item, trail, Principal("alice", AccessRole.REVIEWER))
    kwargs = {"now": T0, "window_seconds": 120.0, "claim_seconds": 60.0}
    assert refusal(transitions.undo, *args, **kwargs) == (409, "decision_final")


def test_a_party_to_the_dispute_cannot_adjudicate_it() -> None:
    item = Item(status="disputed", claimed_by=None, double_review=True)
    ruling = Choice(DecisionValue.FAITHFUL, "the bound holds")
    withdrawn = [Row(1, "root"), Row(2, "root", "withdrawal", None, withdraws_id=1)]
    for earlier in ([Row(1, "root")], withdrawn):
        trail = [*earlier, Row(3, "alice", decision="mismatch")]
        assert refusal(transitions.adjudicate, item, trail, ROOT, ruling) == (
            409,
            "adjudicator_decided",
        )
    # A reopen starts a new round; an unsure takes no side.
    for earlier in (
        [Row(1, "root"), Row(2, "root", "reopen", None)],
        [Row(1, "root", decision="unsure")],
    ):
        trail = [*earlier, Row(5, "alice"), Row(6, "bob", decision="mismatch")]
        step = transitions.adjudicate(item, trail, ROOT, ruling)
        assert (step.status, step.resolves) == (S.RESOLVED, DecisionValue.FAITHFUL)
