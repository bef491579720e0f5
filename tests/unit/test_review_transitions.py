"""The review state machine with plain values: no database, no HTTP."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest

from app.auth.principal import Principal
from app.errors import AppError
from app.models.api_key import AccessRole
from app.models.decision import DEFECTS
from app.review_queue import transitions
from app.review_queue.transitions import Choice
from app.vocabulary import DecisionValue, QueueStatus

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
ALICE = Principal("alice", AccessRole.REVIEWER)
BOB = Principal("bob", AccessRole.REVIEWER)
FAITHFUL, MISMATCH, UNSURE = DecisionValue.FAITHFUL, DecisionValue.MISMATCH, DecisionValue.UNSURE


@dataclass(frozen=True)
class Item:
    id: int = 1
    status: str = "claimed"
    claimed_by: str | None = "alice"
    claim_expires_at: datetime | None = T0 + timedelta(minutes=30)
    claimed_at: datetime | None = T0
    double_review: bool = False
    audit: bool = False


@dataclass(frozen=True)
class Row:
    id: int
    actor: str
    kind: str = "decision"
    decision: str | None = "faithful"
    created_at: datetime = T0
    withdraws_id: int | None = None
    claimed_at: datetime | None = T0
    blind: bool = False


def refusal(call: object, *args: object, **kwargs: object) -> tuple[int, str]:
    with pytest.raises(AppError) as refused:
        call(*args, **kwargs)  # type: ignore[operator]
    return refused.value.status_code, refused.value.code


def test_the_choice_is_checked_and_its_defects_put_in_vocabulary_order() -> None:
    chosen = transitions.choose(MISMATCH, "", ["vacuous", "dropped_hypothesis", "vacuous"])
    assert chosen == Choice(MISMATCH, "", ("dropped_hypothesis", "vacuous"))
    assert transitions.choose(MISMATCH, "why").defects == ()
    assert transitions.choose(UNSURE, "why", ["other"]).defects == ("other",)
    assert refusal(transitions.choose, MISMATCH, "x", ["Vacuous"]) == (422, "unknown_defect")
    assert refusal(transitions.choose, MISMATCH, " \t") == (422, "note_or_defects_required")
    assert refusal(transitions.choose, UNSURE, "", ["other"]) == (422, "note_required")
    assert refusal(transitions.choose, FAITHFUL, "", ["other"]) == (422, "defects_need_mismatch")
    with pytest.raises(AppError) as unknown:
        transitions.choose(MISMATCH, "", ["x"])
    assert unknown.value.extra == {"allowed": list(DEFECTS)}


def test_standing_decisions_leave_out_withdrawn_unsure_and_before_a_reopen() -> None:
    trail = [
        Row(1, "alice"),
        Row(2, "admin", kind="reopen", decision=None),
        Row(3, "bob", decision="unsure"),
        Row(4, "bob", decision="mismatch"),
        Row(5, "bob", kind="withdrawal", decision=None, withdraws_id=4),
        Row(6, "carol", decision="faithful"),
    ]
    assert [row.id for row in transitions.standing(trail)] == [6]


def decide(item: Item, trail: list[Row], who: Principal, value: DecisionValue) -> QueueStatus:
    choice = Choice(value, "why")
    step = transitions.decide(item, trail, who, choice, now=T0, blind_mode="audit")
    assert step.claim is None  # every decision lets go of the item
    return step.status


def test_where_a_decision_takes_the_item() -> None:
    single, double = Item(), Item(double_review=True)
    assert decide(single, [], ALICE, FAITHFUL) is QueueStatus.RESOLVED
    assert decide(single, [], ALICE, UNSURE) is QueueStatus.OPEN
    assert decide(double, [], ALICE, MISMATCH) is QueueStatus.AWAITING_SECOND
    second = replace(double, status="awaiting_second", claimed_by="bob")
    first = [Row(1, "alice", decision="mismatch")]
    assert decide(second, first, BOB, MISMATCH) is QueueStatus.RESOLVED
    assert decide(second, first, BOB, FAITHFUL) is QueueStatus.DISPUTED
    assert decide(second, first, BOB, UNSURE) is QueueStatus.AWAITING_SECOND
    mine = replace(second, claimed_by="alice")
    assert refusal(decide, mine, first, ALICE, FAITHFUL) == (409, "needs_another_reviewer")


def test_a_blind_decision_is_recorded_as_blind_for_reviewers_only() -> None:
    audit = Item(audit=True)
    admin = Principal("alice", AccessRole.ADMIN)
    for who, mode, blind in (
        (ALICE, "audit", True),
        (admin, "audit", False),
        (ALICE, "off", False),
    ):
        step = transitions.decide(audit, [], who, Choice(FAITHFUL), now=T0, blind_mode=mode)  # type: ignore[arg-type]
        assert step.row is not None and step.row.blind is blind
        assert step.row.claimed_at == T0


def test_undo_is_for_the_latest_row_by_its_decider_inside_the_window() -> None:
    resolved = Item(status="resolved", claimed_by=None, claim_expires_at=None, claimed_at=None)
    trail = [Row(7, "alice", claimed_at=T0 - timedelta(minutes=3))]

    def undo(who: Principal, seconds: float, rows: list[Row] = trail) -> transitions.Step:
        return transitions.undo(
            resolved, rows, who, now=T0 + timedelta(seconds=seconds), window_seconds=120,
            claim_seconds=600,
        )  # fmt: skip

    step = undo(ALICE, 119.9)
    assert (step.status, step.unresolves) == (QueueStatus.CLAIMED, True)
    assert step.claim is not None and step.claim.holder == "alice"
    assert step.claim.began_at == T0 - timedelta(minutes=3)  # the claim's time counts on
    assert step.row is not None and step.row.withdraws_id == 7
    assert refusal(undo, ALICE, 120) == (409, "undo_window_passed")
    assert refusal(undo, BOB, 1) == (409, "nothing_to_undo")
    withdrawn = [*trail, Row(8, "alice", kind="withdrawal", decision=None, withdraws_id=7)]
    assert refusal(undo, ALICE, 1, withdrawn) == (409, "nothing_to_undo")


def test_claims_of_settled_and_held_items_are_refused() -> None:
    def claim(item: Item, who: str, trail: list[Row] | None = None) -> transitions.Step:
        return transitions.claim(item, trail or [], who, now=T0, seconds=60)

    assert refusal(claim, Item(status="resolved"), "bob") == (409, "already_resolved")
    assert refusal(claim, Item(status="disputed"), "bob") == (409, "disputed")
    assert refusal(claim, Item(), "bob") == (409, "claimed_by_other")
    lapsed = Item(claim_expires_at=T0 - timedelta(seconds=1))
    assert claim(lapsed, "bob").claim == transitions.Claim("bob", T0 + timedelta(seconds=60), T0)
    extended = claim(Item(claimed_at=T0 - timedelta(minutes=5)), "alice")
    assert extended.claim is not None and extended.claim.began_at == T0 - timedelta(minutes=5)
    waiting = Item(status="awaiting_second", claimed_by=None, double_review=True)
    first = [Row(1, "alice")]
    assert refusal(claim, waiting, "alice", first) == (409, "needs_another_reviewer")
    assert claim(waiting, "bob", first).status is QueueStatus.AWAITING_SECOND
