"""The reviewers' side of the queue: list, read, claim, release, decide, reopen.

Every function takes the request's session (the caller commits) and the acting
Principal, checks the principal's access role itself (so the API and the reviewer web page
enforce the same rules), and raises AppError with the HTTP meaning of a refusal:

- 404 `not_found`: no such item.
- 403 `forbidden`: the role is not enough (reviewer for all; admin to reopen).
- 409 `claimed_by_other`: another reviewer holds a live claim (claim, decide).
- 409 `not_claimed`: deciding an item one does not hold, or releasing an unclaimed one.
- 403 `not_claim_holder`: releasing another reviewer's claim (only an admin may).
- 409 `already_resolved`: claiming or deciding a resolved item (an admin may reopen it).
- 409 `not_resolved`: reopening an item that is not resolved.

Deciding without holding the claim is a 409, not a 403: no role may do it, and the
caller can fix it by claiming. A claim whose lease lapsed still lets its holder decide
until another reviewer takes the item (see repositories/queue_items.resolve).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.errors import require_role
from app.auth.principal import AccessRole, Principal
from app.db.types import utcnow
from app.errors import AppError, NotFound
from app.models.decision import Decision, DecisionKind, DecisionValue
from app.models.queue_item import QueueItem, QueueStatus
from app.models.rescore import RulingRow
from app.models.screening import Screening
from app.repositories import decisions, queue_items, rescores, screenings
from app.repositories.queue_items import QueueFilters, effective_status

__all__ = [
    "ItemDetail",
    "QueueEntry",
    "QueueFilters",
    "QueuePage",
    "claim",
    "decide",
    "get_item",
    "list_items",
    "release",
    "reopen",
]


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """An item (its screening loaded) and its status as of now: a lapsed claim is open."""

    item: QueueItem
    status: QueueStatus


@dataclass(frozen=True, slots=True)
class QueuePage:
    entries: list[QueueEntry]
    next_cursor: str | None


@dataclass(frozen=True, slots=True)
class ItemDetail:
    """Everything a reviewer needs: the item, its screening (pair, evidence, reasons,
    every review with its raw reply), and the decision trail, oldest first."""

    entry: QueueEntry
    screening: Screening
    trail: list[Decision]
    # What re-scoring runs did to it (repositories.rescores.history); empty until one did.
    rulings: list[RulingRow] = field(default_factory=list)
    readings: list[Row[Any]] = field(default_factory=list)


async def list_items(
    session: AsyncSession,
    principal: Principal,
    filters: QueueFilters | None = None,
    *,
    cursor: str | None = None,
    limit: int = 50,
    now: datetime | None = None,
) -> QueuePage:
    """Oldest first. Raises AppError 422 for a cursor that is not from this listing."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    try:
        items, next_cursor = await queue_items.list_page(
            session, filters or QueueFilters(), cursor=cursor, limit=limit, now=now
        )
    except ValueError as error:
        raise AppError(422, "invalid_cursor", f"cursor: {error}") from error
    return QueuePage([QueueEntry(i, effective_status(i, now)) for i in items], next_cursor)


async def get_item(
    session: AsyncSession, principal: Principal, item_id: int, *, now: datetime | None = None
) -> ItemDetail:
    require_role(principal, AccessRole.REVIEWER)
    item = await _existing(session, item_id)
    screening = await screenings.get(session, item.screening_id)
    if screening is None:  # a foreign key forbids it
        raise RuntimeError(f"queue item {item_id} names a missing screening")
    trail = await decisions.for_item(session, item_id)
    rulings, readings = await rescores.history(session, item.screening_id)
    entry = QueueEntry(item, effective_status(item, now or utcnow()))
    return ItemDetail(entry, screening, trail, rulings, readings)


async def claim(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    *,
    claim_seconds: float,
    now: datetime | None = None,
) -> QueueEntry:
    """Hold the item for `claim_seconds` (FAITHSCREEN_REVIEW_CLAIM_SECONDS); the holder
    claiming again extends the claim; a lapsed claim can be taken by anyone."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    expires_at = now + timedelta(seconds=claim_seconds)
    if not await queue_items.claim(
        session, item_id, principal.name, expires_at=expires_at, now=now
    ):
        raise await _why_not_claimable(session, item_id)
    return QueueEntry(await _existing(session, item_id), QueueStatus.CLAIMED)


async def release(
    session: AsyncSession, principal: Principal, item_id: int, *, now: datetime | None = None
) -> QueueEntry:
    """Give the claim back (the holder, or an admin for anyone's claim)."""
    require_role(principal, AccessRole.REVIEWER)
    holder = None if principal.allows(AccessRole.ADMIN) else principal.name
    if not await queue_items.release(session, item_id, holder=holder, now=now or utcnow()):
        item = await _existing(session, item_id)
        if item.status != QueueStatus.CLAIMED:
            raise AppError(409, "not_claimed", f"queue item {item_id} is not claimed")
        raise AppError(
            403,
            "not_claim_holder",
            f"queue item {item_id} is claimed by '{item.claimed_by}'; "
            "only its holder or an admin may release it",
        )
    return QueueEntry(await _existing(session, item_id), QueueStatus.OPEN)


async def decide(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    decision: DecisionValue,
    note: str = "",
    *,
    now: datetime | None = None,
) -> Decision:
    """Record the claimant's decision: the item is resolved, the trail gains a row, and
    the screening's `final_decision` is set (its outcome is never changed)."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    if not await queue_items.resolve(session, item_id, principal.name, now=now):
        raise await _why_not_decidable(session, item_id, now)
    item = await _existing(session, item_id)
    row = await _append(session, item, principal, DecisionKind.DECISION, decision, note, now)
    await decisions.set_final_decision(session, item.screening_id, decision.value, at=now)
    return row


async def reopen(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    note: str = "",
    *,
    now: datetime | None = None,
) -> Decision:
    """An admin sends a resolved item back to the queue: the trail gains a `reopen` row
    (the earlier decision stays in it) and the screening's `final_decision` is cleared."""
    require_role(principal, AccessRole.ADMIN)
    now = now or utcnow()
    if not await queue_items.reopen(session, item_id, now=now):
        await _existing(session, item_id)
        raise AppError(409, "not_resolved", f"queue item {item_id} is not resolved")
    item = await _existing(session, item_id)
    row = await _append(session, item, principal, DecisionKind.REOPEN, None, note, now)
    await decisions.set_final_decision(session, item.screening_id, None, at=None)
    return row


async def _append(
    session: AsyncSession,
    item: QueueItem,
    principal: Principal,
    kind: DecisionKind,
    decision: DecisionValue | None,
    note: str,
    now: datetime,
) -> Decision:
    return await decisions.add(
        session,
        queue_item_id=item.id,
        screening_id=item.screening_id,
        kind=kind,
        decision=decision.value if decision is not None else None,
        note=note,
        actor=principal.name,
        actor_role=principal.role.value,
        at=now,
    )


async def _existing(session: AsyncSession, item_id: int) -> QueueItem:
    item = await queue_items.get(session, item_id)
    if item is None:
        raise NotFound("queue item", item_id)
    return item


async def _why_not_claimable(session: AsyncSession, item_id: int) -> AppError:
    item = await _existing(session, item_id)
    if item.status == QueueStatus.RESOLVED:
        return _already_resolved(item)
    return _claimed_by_other(item)


async def _why_not_decidable(session: AsyncSession, item_id: int, now: datetime) -> AppError:
    item = await _existing(session, item_id)
    if item.status == QueueStatus.RESOLVED:
        return _already_resolved(item)
    if effective_status(item, now) is QueueStatus.CLAIMED:
        return _claimed_by_other(item)
    return AppError(
        409, "not_claimed", f"queue item {item_id} is not claimed by you: claim it first"
    )


def _already_resolved(item: QueueItem) -> AppError:
    return AppError(
        409,
        "already_resolved",
        f"queue item {item.id} is resolved; decisions are final unless an admin reopens it",
    )


def _claimed_by_other(item: QueueItem) -> AppError:
    until = item.claim_expires_at.isoformat() if item.claim_expires_at else "?"
    return AppError(
        409,
        "claimed_by_other",
        f"queue item {item.id} is claimed by '{item.claimed_by}' until {until}",
    )
