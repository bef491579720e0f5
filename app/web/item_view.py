"""What the item page shows about a queue item's state, and which controls it offers.

The controls follow the service's rules so a reviewer is not offered what would be refused
(app/review_queue/service.py); the service still decides every post. What a blind item or
a double review hides is the API's item (app/api/queue_schemas.QueueItemOut, built with
visibility.blind_for): the page shows nothing the API would not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.api.queue_schemas import DecisionOut, QueueItemOut
from app.api.schemas import ReadingOut, ReviewOut, ScreeningOut
from app.api.shown_text import cut_texts, raw_path
from app.auth.principal import Principal
from app.contract.provider_reply import ToolCall
from app.llm.body import MalformedBody, read_completion
from app.models.api_key import AccessRole
from app.models.decision import DEFECTS, FINAL_VALUES
from app.review_queue.transitions import withdrawable
from app.vocabulary import DecisionKind, ParseStatus, QueueStatus, ReplyFormat, Role
from app.web.access import Reviewer
from app.web.lean_view import lean_shown
from app.web.pages import context_for
from app.web.pair_view import back_translations, pair_view
from app.web.presentation import when

# The API's limit on a note (app/api/queue_schemas.Note); the form only hints at it.
NOTE_LIMIT = 10_000
TRANSLATOR = Role.TRANSLATOR
# Keys 1-9 then 0 tick the defects in the vocabulary's order.
DEFECT_KEYS = tuple(zip("1234567890", DEFECTS, strict=True))
RULED = (DecisionKind.DECISION, DecisionKind.ADJUDICATION)


@dataclass(frozen=True, slots=True)
class Controls:
    """What this person may do with the item now."""

    can_claim: bool
    can_decide: bool
    can_release: bool
    can_reopen: bool
    can_adjudicate: bool
    # The decision of theirs they may still withdraw, and the seconds left to do it.
    undoable: DecisionOut | None
    undo_seconds_left: int


def claim_state(item: QueueItemOut, principal: Principal) -> str:
    status = item.status
    if status is QueueStatus.RESOLVED:
        return _resolved_state(item)
    if status is QueueStatus.DISPUTED:
        state = "Disputed: the two decisions disagree. Only an admin settles it (adjudicate)"
        if principal.allows(AccessRole.ADMIN) and _party(item, principal):
            return f"{state}, and not one who gave either: another admin must."
        return f"{state}."
    if status is QueueStatus.AWAITING_SECOND:
        return _awaiting_state(item, principal)
    if status is QueueStatus.CLAIMED:
        return _held_state(item, principal)
    return "Open: nobody holds it. Claim it, or decide at once (that claims it for you)."


def _held_state(item: QueueItemOut, principal: Principal) -> str:
    holder = "you" if item.claimed_by == principal.name else item.claimed_by
    state = f"Claimed by {holder} until {when(item.claim_expires_at)}."
    return state if holder == "you" else f"{state} Only they can decide it until then."


def _awaiting_state(item: QueueItemOut, principal: Principal) -> str:
    if _decided_first(item, principal):
        return "You gave the first decision: a second person must decide it now."
    state = "Awaiting a second decision: one person has decided; another must decide too."
    if item.claimed_by:
        return f"{state} {_held_state(item, principal)}"
    return f"{state} Claim it, or decide at once."


def _resolved_state(item: QueueItemOut) -> str:
    ruled = [row for row in _standing(item.trail) if row.kind in RULED]
    if not ruled:
        return "Resolved."
    last = ruled[-1]
    verb = "adjudicated by" if last.kind is DecisionKind.ADJUDICATION else "by"
    return f"Resolved: {last.decision} {verb} {last.actor} at {when(last.created_at)}."


def _standing(trail: list[DecisionOut]) -> list[DecisionOut]:
    """The trail without withdrawn decisions and the withdrawals themselves."""
    withdrawn = {row.withdraws_id for row in trail if row.kind is DecisionKind.WITHDRAWAL}
    return [r for r in trail if r.kind is not DecisionKind.WITHDRAWAL and r.id not in withdrawn]


def _since_reopen(trail: list[DecisionOut]) -> list[DecisionOut]:
    reopens = [i for i, row in enumerate(trail) if row.kind is DecisionKind.REOPEN]
    return trail[reopens[-1] + 1 :] if reopens else trail


def _decided_first(item: QueueItemOut, principal: Principal) -> bool:
    current = _since_reopen(_standing(item.trail))
    return any(r.kind is DecisionKind.DECISION and r.actor == principal.name for r in current)


def _party(item: QueueItemOut, principal: Principal) -> bool:
    """Whether the person gave a faithful or mismatch decision in this round (withdrawn or
    not): transitions.is_party, read from the trail the page has (an admin's is whole)."""
    return any(
        r.kind is DecisionKind.DECISION and r.decision in FINAL_VALUES and r.actor == principal.name
        for r in _since_reopen(item.trail)
    )


def controls(
    item: QueueItemOut, principal: Principal, *, undo_seconds: float, now: datetime
) -> Controls:
    status, admin = item.status, principal.allows(AccessRole.ADMIN)
    held = item.claimed_by is not None
    mine = held and item.claimed_by == principal.name
    second = status is QueueStatus.AWAITING_SECOND and not _decided_first(item, principal)
    takeable = status is QueueStatus.OPEN or (second and not (held and not mine))
    undoable, left = _undoable(item, principal, undo_seconds, now)
    return Controls(
        can_claim=takeable and not mine,
        can_decide=takeable or (status is QueueStatus.CLAIMED and mine),
        can_release=held and status is not QueueStatus.RESOLVED and (mine or admin),
        can_reopen=status is QueueStatus.RESOLVED and admin,
        can_adjudicate=status is QueueStatus.DISPUTED and admin and not _party(item, principal),
        undoable=undoable,
        undo_seconds_left=left,
    )


def _undoable(
    item: QueueItemOut, principal: Principal, undo_seconds: float, now: datetime
) -> tuple[DecisionOut | None, int]:
    """The person's own decision, when it is the trail's last row, not final (a blind or
    second decision that settled the item: transitions.withdrawable) and still inside
    FAITHSCREEN_REVIEW_UNDO_SECONDS."""
    if not item.trail:
        return None, 0
    last = item.trail[-1]
    if last.kind is not DecisionKind.DECISION or last.actor != principal.name:
        return None, 0
    if not withdrawable(item.status, double_review=item.double_review, blind=last.blind):
        return None, 0
    left = int(undo_seconds - (now - last.created_at).total_seconds())
    return (last, left) if left > 0 else (None, 0)


def tool_calls_shown(
    screening_id: str, stored: Iterable[tuple[int, ReplyFormat, str | None]]
) -> dict[int, tuple[ToolCall, ...]]:
    """Review id -> the tool calls its model wrote, read from its stored body as the
    tool-1 reader gets them (arguments byte for byte), for each review asked as a tool call
    (id, reply format, raw body). Arguments past SHOWN_CHARACTERS are cut with the raw
    endpoint's marker, as every provider text is. A body that does not read shows none:
    the raw reply and its parse status still say what came."""
    shown: dict[int, tuple[ToolCall, ...]] = {}
    for review_id, reply_format, body in stored:
        if reply_format is not ReplyFormat.TOOL or not body:
            continue
        try:
            calls = read_completion(body).tool_calls
        except MalformedBody:
            continue
        whole_at = raw_path(screening_id, review_id)
        shown[review_id] = tuple(_cut_call(call, whole_at) for call in calls)
    return shown


def _cut_call(call: ToolCall, whole_at: str) -> ToolCall:
    cut, _ = cut_texts({"arguments": call.arguments}, ("arguments",), whole_at)
    return ToolCall(call.name, cut.get("arguments", call.arguments))


def item_context(
    item: QueueItemOut,
    reviewer: Reviewer,
    *,
    undo_seconds: float,
    now: datetime,
    next_id: int | None,
    message: str | None,
    tool_calls: Mapping[int, tuple[ToolCall, ...]] | None = None,
) -> dict[str, Any]:
    principal, screening = reviewer.principal, item.screening
    reviews: list[ReviewOut] = [] if screening.blind else list(screening.reviews)
    evidence = [] if screening.blind else screening.evidence
    # A blind item shows no Lean either: like evidence, it would tell the outcome.
    check = screening.lean_check if isinstance(screening, ScreeningOut) else None
    lean = None if screening.blind else lean_shown(check, screening.header)
    return context_for(
        principal,
        reviewer.signed_in,
        item=item,
        screening=screening,
        pair=pair_view(
            screening.informal,
            screening.formal,
            screening.header,
            evidence,
            lean.marks if lean else None,
        ),
        lean=lean,
        # In the pipeline's order: the translator back-translates, then the judges rule.
        reviews=sorted(
            reviews, key=lambda r: (r.role != TRANSLATOR, r.role, r.judge_name or "", r.attempt)
        ),
        back_translations=back_translations(reviews),
        unread=lambda review: review.parse_status != ParseStatus.OK,
        # review id -> the tool calls of a `tool` reply (none for a blind item: no review).
        tool_calls={} if screening.blind else dict(tool_calls or {}),
        # (role, judge, attempt) -> the re-readings of that review by re-scoring runs, oldest
        # first.
        rereads=_rereads(item),
        trail=item.trail,
        claim_state=claim_state(item, principal),
        controls=controls(item, principal, undo_seconds=undo_seconds, now=now),
        defect_keys=DEFECT_KEYS,
        next_url=f"/review/items/{next_id}" if next_id is not None else None,
        note_limit=NOTE_LIMIT,
        message=message,
    )


def _rereads(item: QueueItemOut) -> dict[tuple[str, str | None, int], list[ReadingOut]]:
    found: dict[tuple[str, str | None, int], list[ReadingOut]] = {}
    if not item.screening.blind:
        for reading in item.screening.readings:
            key = (reading.role, reading.judge_name, reading.attempt)
            found.setdefault(key, []).append(reading)
    return found
