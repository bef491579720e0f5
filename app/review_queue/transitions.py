"""The review state machine: what a claim, a release, a decision, an undo, an adjudication
or a reopen does to a queue item, given the item and its trail -- or the AppError saying
why not. Pure: service.py locks the item, asks here, and stores the step.

    open --claim--> claimed --faithful / mismatch--> resolved
                       |  (double review) --------> awaiting_second --claim (someone else)-->
                       |                             second decision: the same -> resolved,
                       |                                              the other -> disputed
                       +--unsure--> open (an awaiting_second item stays awaiting_second)
    disputed --adjudicate (an admin, without a claim)--> resolved --reopen (an admin)--> open
    a decision --undo (its decider, inside FAITHSCREEN_REVIEW_UNDO_SECONDS, nothing since)-->
        the item as it was before it, claimed by them again -- unless it is final (below)

The trail is the record of who decided what. A round is the trail since the last reopen;
its standing decisions are its `decision` rows with a final value (faithful, mismatch)
that no withdrawal took back. `unsure` records a doubt and resolves nothing.

A decision is final (no undo) when it settled the item (resolved or disputed it) and was
either made blind or a double review's second: settling it showed its author what they
decided without -- the models' answer, or whether the first decision agrees -- and an
undo would let them decide again knowing it. Refusing that undo is one check here (the
page asks `withdrawable` too), where keeping the item blind through the undo window would
have to be a rule of time in every read path. For the same reason a decision after a
reopen is never recorded blind: the item was resolved, so open to every reviewer, once.
An admin who gave one of a round's decisions cannot adjudicate its dispute (a party does
not judge their own case).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from app.auth.principal import Principal
from app.errors import AppError
from app.models.api_key import AccessRole
from app.models.decision import FINAL_VALUES
from app.models.queue_item import Claim
from app.review_queue.choices import Choice as Choice  # re-exported, as is choose
from app.review_queue.choices import choose as choose
from app.review_queue.visibility import BlindMode, blind_for
from app.vocabulary import DecisionKind, DecisionValue, QueueStatus

OPEN, CLAIMED = QueueStatus.OPEN, QueueStatus.CLAIMED
AWAITING_SECOND, DISPUTED, RESOLVED = (
    QueueStatus.AWAITING_SECOND,
    QueueStatus.DISPUTED,
    QueueStatus.RESOLVED,
)
# Statuses in which an item can be held by a claim.
CLAIMABLE = (OPEN, CLAIMED, AWAITING_SECOND)


class ItemState(Protocol):
    """A queue item as the machine reads it (models.queue_item.QueueItem)."""

    @property
    def id(self) -> int: ...
    @property
    def status(self) -> str: ...
    @property
    def claimed_by(self) -> str | None: ...
    @property
    def claim_expires_at(self) -> datetime | None: ...
    @property
    def claimed_at(self) -> datetime | None: ...
    @property
    def double_review(self) -> bool: ...
    @property
    def audit(self) -> bool: ...


class TrailRow(Protocol):
    """A row of an item's trail (models.decision.Decision)."""

    @property
    def id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def decision(self) -> str | None: ...
    @property
    def actor(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def withdraws_id(self) -> int | None: ...
    @property
    def claimed_at(self) -> datetime | None: ...
    @property
    def blind(self) -> bool: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRow:
    """The trail row a step appends."""

    kind: DecisionKind
    decision: DecisionValue | None = None
    note: str = ""
    defects: tuple[str, ...] = ()
    blind: bool = False
    claimed_at: datetime | None = None
    withdraws_id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """Where an item goes: its new status and claim (None: nobody holds it), the row the
    trail gains, and what becomes of its screenings' final decision."""

    status: QueueStatus
    claim: Claim | None = None
    row: NewRow | None = None
    # The item is resolved: each screening it answers for takes this final decision.
    resolves: DecisionValue | None = None
    # The item leaves `resolved` (undo, reopen): its screenings' final decision is cleared
    # and it is its pair's one unresolved item again.
    unresolves: bool = False


# ---- The trail ---------------------------------------------------------------------------------


def current_round(trail: Sequence[TrailRow]) -> Sequence[TrailRow]:
    """The trail since its last reopen."""
    reopens = [i for i, row in enumerate(trail) if row.kind == DecisionKind.REOPEN]
    return trail[reopens[-1] + 1 :] if reopens else trail


def standing(trail: Sequence[TrailRow]) -> list[TrailRow]:
    """The round's final decisions that no withdrawal took back, oldest first."""
    withdrawn = {row.withdraws_id for row in trail if row.withdraws_id is not None}
    return [
        row
        for row in current_round(trail)
        if row.kind == DecisionKind.DECISION
        and row.decision in FINAL_VALUES
        and row.id not in withdrawn
    ]


# ---- Claims ----------------------------------------------------------------------------------


def claim(
    item: ItemState, trail: Sequence[TrailRow], name: str, *, now: datetime, seconds: float
) -> Step:
    """Hold the item for `seconds`: an open item, one whose claim lapsed, one `name`
    holds (extended), or a double review awaiting a second person other than the first."""
    status = _refuse_settled(item)
    if _held_by_other(item, name, now):
        raise claimed_by_other(item)
    if status is AWAITING_SECOND and _decided_already(item, trail, name):
        raise needs_another_reviewer(item, name)
    mine = item.claimed_by == name and item.claimed_at is not None
    began = item.claimed_at if mine and item.claimed_at is not None else now
    held = Claim(name, now + timedelta(seconds=seconds), began)
    return Step(status=AWAITING_SECOND if status is AWAITING_SECOND else CLAIMED, claim=held)


def release(item: ItemState, principal: Principal) -> Step:
    """Give the claim back: its holder, or an admin for anyone's."""
    status = QueueStatus(item.status)
    if item.claimed_by is None or status not in (CLAIMED, AWAITING_SECOND):
        raise AppError(409, "not_claimed", f"queue item {item.id} is not claimed")
    if item.claimed_by != principal.name and principal.role is not AccessRole.ADMIN:
        raise AppError(
            403,
            "not_claim_holder",
            f"queue item {item.id} is claimed by '{item.claimed_by}'; "
            "only its holder or an admin may release it",
        )
    return Step(status=AWAITING_SECOND if status is AWAITING_SECOND else OPEN)


# ---- Decisions -------------------------------------------------------------------------------


def decide(
    item: ItemState,
    trail: Sequence[TrailRow],
    principal: Principal,
    choice: Choice,
    *,
    now: datetime,
    blind_mode: BlindMode,
) -> Step:
    """The claimant's decision (a lapsed claim still counts until someone else takes it)."""
    status = _refuse_settled(item)
    name = principal.name
    if not (item.claimed_by == name and status in (CLAIMED, AWAITING_SECOND)):
        if _held_by_other(item, name, now):
            raise claimed_by_other(item)
        raise AppError(
            409, "not_claimed", f"queue item {item.id} is not claimed by you: claim it first"
        )
    if _decided_already(item, trail, name):
        raise needs_another_reviewer(item, name)
    # Once resolved (a reopen in the trail), the item was open to every reviewer.
    reopened = any(row.kind == DecisionKind.REOPEN for row in trail)
    blind = blind_for(principal, blind_mode, audit=item.audit, resolved=reopened)
    row = NewRow(
        kind=DecisionKind.DECISION,
        decision=choice.decision,
        note=choice.note,
        defects=choice.defects,
        blind=blind,
        claimed_at=item.claimed_at,
    )
    after = _after_decision(item, trail, choice.decision)
    return Step(status=after, row=row, resolves=choice.decision if after is RESOLVED else None)


def _after_decision(
    item: ItemState, trail: Sequence[TrailRow], decision: DecisionValue
) -> QueueStatus:
    status = QueueStatus(item.status)
    if decision is DecisionValue.UNSURE:
        return AWAITING_SECOND if status is AWAITING_SECOND else OPEN
    if not item.double_review:
        return RESOLVED
    first = standing(trail)
    if not first:
        return AWAITING_SECOND
    return RESOLVED if first[0].decision == decision else DISPUTED


def adjudicate(
    item: ItemState, trail: Sequence[TrailRow], principal: Principal, choice: Choice
) -> Step:
    """An admin settles a disputed double review (no claim needed), unless they decided it."""
    if choice.decision is DecisionValue.UNSURE:
        raise AppError(
            422, "final_decision_required", "an adjudication decides: faithful or mismatch"
        )
    status = QueueStatus(item.status)
    if status is not DISPUTED:
        raise AppError(
            409,
            "not_disputed",
            f"queue item {item.id} is {status.value}: only a disputed double review is adjudicated",
        )
    if is_party(trail, principal.name):
        raise AppError(
            409,
            "adjudicator_decided",
            f"'{principal.name}' gave one of the decisions of queue item {item.id}'s dispute: "
            "another admin must adjudicate it",
        )
    row = NewRow(
        kind=DecisionKind.ADJUDICATION,
        decision=choice.decision,
        note=choice.note,
        defects=choice.defects,
    )
    return Step(status=RESOLVED, row=row, resolves=choice.decision)


def is_party(trail: Sequence[TrailRow], name: str) -> bool:
    """Whether `name` gave a faithful or mismatch decision in the round (withdrawn or not)."""
    return any(
        row.kind == DecisionKind.DECISION and row.decision in FINAL_VALUES and row.actor == name
        for row in current_round(trail)
    )


def undo(
    item: ItemState,
    trail: Sequence[TrailRow],
    principal: Principal,
    *,
    now: datetime,
    window_seconds: float,
    claim_seconds: float,
) -> Step:
    """Withdraw the caller's decision: the latest row of the trail, made by them less than
    `window_seconds` ago. The item goes back to where it was, claimed by them."""
    last = trail[-1] if trail else None
    if last is None or last.kind != DecisionKind.DECISION or last.actor != principal.name:
        raise AppError(
            409,
            "nothing_to_undo",
            f"queue item {item.id} has no decision of yours to undo: only the latest row of "
            "its trail can be withdrawn, by the person who made it",
        )
    if not withdrawable(
        QueueStatus(item.status), double_review=item.double_review, blind=last.blind
    ):
        raise decision_final(item, last.id)
    elapsed = (now - last.created_at).total_seconds()
    if elapsed >= window_seconds:
        raise AppError(
            409,
            "undo_window_passed",
            f"decision {last.id} was made {elapsed:.0f} s ago; a decision can be withdrawn "
            f"for {window_seconds:g} s (FAITHSCREEN_REVIEW_UNDO_SECONDS). An admin can "
            "reopen a resolved item",
        )
    if _held_by_other(item, principal.name, now):
        raise claimed_by_other(item)
    second = item.double_review and bool(standing(trail[:-1]))
    held = Claim(principal.name, now + timedelta(seconds=claim_seconds), last.claimed_at or now)
    row = NewRow(kind=DecisionKind.WITHDRAWAL, withdraws_id=last.id, blind=last.blind)
    return Step(
        status=AWAITING_SECOND if second else CLAIMED,
        claim=held,
        row=row,
        unresolves=QueueStatus(item.status) is RESOLVED,
    )


def withdrawable(status: QueueStatus, *, double_review: bool, blind: bool) -> bool:
    """Whether the latest decision, which left the item at `status`, may be undone: not when
    it settled the item (resolved or disputed it) and was made blind or was a double
    review's second (see the module docstring)."""
    settled = status in (RESOLVED, DISPUTED)
    return not (settled and (blind or double_review))


def decision_final(item: ItemState, decision_id: int) -> AppError:
    return AppError(
        409,
        "decision_final",
        f"decision {decision_id} settled queue item {item.id} and is final: it was made "
        "blind, or as a double review's second decision, and settling the item showed what "
        "it was decided without (the models' answer, or whether the first decision agrees). "
        "An admin can reopen a resolved item",
    )


def reopen(item: ItemState, note: str) -> Step:
    """An admin sends a resolved item back to the queue (the trail keeps everything)."""
    if QueueStatus(item.status) is not RESOLVED:
        raise AppError(409, "not_resolved", f"queue item {item.id} is not resolved")
    return Step(status=OPEN, row=NewRow(kind=DecisionKind.REOPEN, note=note), unresolves=True)


# ---- Refusals --------------------------------------------------------------------------------


def _refuse_settled(item: ItemState) -> QueueStatus:
    status = QueueStatus(item.status)
    if status is RESOLVED:
        raise AppError(
            409,
            "already_resolved",
            f"queue item {item.id} is resolved; decisions are final unless an admin reopens it",
        )
    if status is DISPUTED:
        raise AppError(
            409,
            "disputed",
            f"queue item {item.id} is disputed: its two decisions disagree, and only an "
            "admin's adjudication (POST /v1/queue/{id}/adjudicate) settles it",
        )
    return status


def _held_by_other(item: ItemState, name: str, now: datetime) -> bool:
    live = item.claim_expires_at is not None and item.claim_expires_at > now
    return item.claimed_by is not None and item.claimed_by != name and live


def _decided_already(item: ItemState, trail: Sequence[TrailRow], name: str) -> bool:
    """A double review's standing decision is `name`'s: the second must be someone else's."""
    return item.double_review and any(row.actor == name for row in standing(trail))


def claimed_by_other(item: ItemState) -> AppError:
    until = item.claim_expires_at.isoformat() if item.claim_expires_at else "?"
    return AppError(
        409,
        "claimed_by_other",
        f"queue item {item.id} is claimed by '{item.claimed_by}' until {until}",
    )


def needs_another_reviewer(item: ItemState, name: str) -> AppError:
    return AppError(
        409,
        "needs_another_reviewer",
        f"queue item {item.id} is a double review and '{name}' has decided it: its second "
        "decision must come from someone else",
    )
