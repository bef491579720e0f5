"""What the item page shows about a queue item's claim, and which buttons it offers.

The buttons follow the service's rules so a reviewer is not offered what would be refused;
the service still decides every post.
"""

from __future__ import annotations

from typing import Any

from app.api.queue_schemas import QueueItemOut
from app.api.schemas import ReadingOut
from app.auth.principal import AccessRole, Principal
from app.models.decision import DecisionKind
from app.models.queue_item import QueueStatus
from app.vocabulary import Role
from app.web.access import Reviewer
from app.web.pages import context_for
from app.web.presentation import when

# The API's limit on a note (app/api/queue_schemas.Note); the form only hints at it.
NOTE_LIMIT = 10_000
TRANSLATOR = Role.TRANSLATOR.value


def claim_state(item: QueueItemOut, principal: Principal) -> str:
    if item.status is QueueStatus.RESOLVED:
        return _resolved_state(item)
    if item.status is QueueStatus.CLAIMED:
        holder = "you" if item.claimed_by == principal.name else item.claimed_by
        state = f"Claimed by {holder} until {when(item.claim_expires_at)}."
        return state if holder == "you" else f"{state} Only they can decide it until then."
    return "Open: nobody holds it. Claim it, or decide at once (that claims it for you)."


def _resolved_state(item: QueueItemOut) -> str:
    decided = [row for row in item.trail if row.kind is DecisionKind.DECISION]
    if not decided:
        return "Resolved."
    last = decided[-1]
    return f"Resolved: {last.decision} by {last.actor} at {when(last.created_at)}."


def item_context(
    item: QueueItemOut, reviewer: Reviewer, *, next_id: int | None, message: str | None
) -> dict[str, Any]:
    principal, status = reviewer.principal, item.status
    mine = status is QueueStatus.CLAIMED and item.claimed_by == principal.name
    admin = principal.allows(AccessRole.ADMIN)
    return context_for(
        principal,
        reviewer.signed_in,
        item=item,
        screening=item.screening,
        # In the pipeline's order: the translator back-translates, then the judge rules.
        # A blind item's screening holds the pair only (no reviews, no readings).
        reviews=sorted(
            getattr(item.screening, "reviews", []), key=lambda r: (r.role != TRANSLATOR, r.attempt)
        ),
        # (role, attempt) -> the re-readings of that review by re-scoring runs, oldest first.
        rereads=_rereads(item),
        trail=item.trail,
        claim_state=claim_state(item, principal),
        mine=mine,
        can_claim=status is QueueStatus.OPEN,
        can_decide=status is QueueStatus.OPEN or mine,
        can_release=status is QueueStatus.CLAIMED and (mine or admin),
        can_reopen=status is QueueStatus.RESOLVED and admin,
        next_url=f"/review/items/{next_id}" if next_id is not None else None,
        note_limit=NOTE_LIMIT,
        message=message,
    )


def _rereads(item: QueueItemOut) -> dict[tuple[str, int], list[ReadingOut]]:
    found: dict[tuple[str, int], list[ReadingOut]] = {}
    for reading in getattr(item.screening, "readings", []):
        found.setdefault((reading.role, reading.attempt), []).append(reading)
    return found
