"""app/review_queue/threads.visible_comments: which comments a person may read while a
double review awaits its second decision, after a reopen (the integration tests in
tests/integration/test_review_threads.py cover the blind item and the first round)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.auth.principal import Principal
from app.models.api_key import AccessRole
from app.models.decision import Decision
from app.models.review_thread import Comment
from app.review_queue.threads import visible_comments
from app.vocabulary import DecisionKind

START = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
BOB = Principal("bob", AccessRole.REVIEWER)


def said(actor: str, minute: int) -> Comment:
    return Comment(
        queue_item_id=1,
        body=f"{actor} at {minute}",
        actor=actor,
        actor_role=AccessRole.REVIEWER,
        created_at=START + timedelta(minutes=minute),
    )


def reopened(minute: int) -> Decision:
    return Decision(
        queue_item_id=1, kind=DecisionKind.REOPEN, created_at=START + timedelta(minutes=minute)
    )


def test_awaiting_a_second_decision_shows_others_comments_only_from_before_the_last_reopen() -> (
    None
):
    thread = [said("alice", 1), said("carol", 3), said("alice", 6), said("bob", 7)]
    trail = [reopened(2), reopened(5)]
    shown = visible_comments(BOB, thread, trail, blind=False, awaiting_second=True)
    assert [c.body for c in shown] == ["alice at 1", "carol at 3", "bob at 7"]
    # Without a reopen, nothing another person said is shown; an admin reads everything.
    alone = visible_comments(BOB, thread, [], blind=False, awaiting_second=True)
    assert [c.body for c in alone] == ["bob at 7"]
    admin = Principal("root", AccessRole.ADMIN)
    assert visible_comments(admin, thread, trail, blind=True, awaiting_second=True) == thread
