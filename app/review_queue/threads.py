"""Around deciding a queue item: opening it (the start of a reviewer's time on it),
commenting on it, and assigning it. Each function checks the principal's role itself, as
service.py does, so the API and the review page follow the same rules; the caller commits.

Who may assign whom: an admin assigns an item to any reviewer or admin key (or to
nobody); a reviewer may take an unassigned item for themselves (403 `assign_self_only`
for anyone else, `assigned_to_other` for an item someone holds), and give back one
assigned to them (403 `not_assignee` for another's).
Every change is an append-only `assignments` row (who, to whom, when): the audit. A
resolved item is not assigned (409 `already_resolved`), and a double review awaiting its
second decision is not assigned to its first person (409 `needs_another_reviewer`).

Comments are append-only too, and follow the blind rules of the trail
(review_queue/visibility.py): to a person an item is blind to, only their own comments
are shown (another's could tell the outcome, or another reviewer's decision), and while a
double review awaits its second decision, a non-admin sees no comment another person made
since the last reopen, as with that round's decisions. Admins see every comment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.errors import require_role
from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError, NotFound
from app.models.api_key import AccessRole
from app.models.decision import Decision
from app.models.queue_item import QueueItem
from app.models.review_thread import Assignment, Comment
from app.repositories import api_keys, blind_items, decisions, queue_items, review_threads
from app.review_queue.transitions import needs_another_reviewer, standing
from app.review_queue.visibility import BlindMode, item_blind_for
from app.vocabulary import DecisionKind, QueueStatus


@dataclass(frozen=True, slots=True)
class Assigned:
    """The row an assignment added (None when it changed nothing), and the assignee now."""

    row: Assignment | None
    assignee: str | None


async def open_item(
    session: AsyncSession, principal: Principal, item_id: int, *, now: datetime | None = None
) -> None:
    """The principal opened the item: their first opening in this round is kept."""
    require_role(principal, AccessRole.REVIEWER)
    await review_threads.open_item(session, item_id, principal.name, now or utcnow())


async def comment(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    body: str,
    *,
    now: datetime | None = None,
) -> Comment:
    """Add a comment (any item, resolved ones too: a comment decides nothing)."""
    require_role(principal, AccessRole.REVIEWER)
    if not body.strip():
        raise AppError(422, "comment_empty", "a comment needs some text")
    await _existing(session, item_id)
    return await review_threads.add_comment(
        session,
        item_id=item_id,
        body=body,
        actor=principal.name,
        actor_role=principal.role,
        at=now or utcnow(),
    )


def visible_comments(
    principal: Principal,
    comments: Sequence[Comment],
    trail: Sequence[Decision],
    *,
    blind: bool,
    awaiting_second: bool,
) -> list[Comment]:
    """The comments `principal` may read (the module docstring's rules); `blind`: the item
    is blind to them (visibility.item_blind_for)."""
    if principal.role is AccessRole.ADMIN:
        return list(comments)
    if blind:
        return [c for c in comments if c.actor == principal.name]
    if not awaiting_second:
        return list(comments)
    reopens = [row.created_at for row in trail if row.kind == DecisionKind.REOPEN]
    since = reopens[-1] if reopens else None
    return [
        c
        for c in comments
        if c.actor == principal.name or (since is not None and c.created_at <= since)
    ]


async def assign(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    assignee: str | None,
    *,
    now: datetime | None = None,
) -> Assigned:
    """Assign the item to `assignee` (None: to nobody), by the rules of the module docstring."""
    require_role(principal, AccessRole.REVIEWER)
    item = await queue_items.lock(session, item_id)
    if item is None:
        raise NotFound("queue item", item_id)
    current = (await review_threads.assignees(session, [item_id])).get(item_id)
    _may_assign(principal, item_id, current, assignee)
    if assignee == current:
        return Assigned(None, current)
    if QueueStatus(item.status) is QueueStatus.RESOLVED and assignee is not None:
        raise AppError(
            409, "already_resolved", f"queue item {item_id} is resolved: nothing to assign"
        )
    if assignee is not None:
        await _refuse_assignee(session, principal, item, assignee)
    row = await review_threads.assign(
        session,
        item_id=item_id,
        assignee=assignee,
        actor=principal.name,
        actor_role=principal.role,
        at=now or utcnow(),
    )
    return Assigned(row, assignee)


def _may_assign(
    principal: Principal, item_id: int, current: str | None, assignee: str | None
) -> None:
    if principal.role is AccessRole.ADMIN:
        return
    me = principal.name
    if assignee is not None and assignee != me:
        raise AppError(
            403,
            "assign_self_only",
            f"a reviewer may take queue item {item_id} for themselves only; an admin "
            "assigns it to someone else",
        )
    if assignee == me and current not in (None, me):
        raise AppError(
            403,
            "assigned_to_other",
            f"queue item {item_id} is assigned to '{current}'; only an admin reassigns it",
        )
    if assignee is None and current not in (None, me):
        raise AppError(
            403,
            "not_assignee",
            f"queue item {item_id} is assigned to '{current}'; only they or an admin may "
            "unassign it",
        )


async def _refuse_assignee(
    session: AsyncSession, principal: Principal, item: QueueItem, assignee: str
) -> None:
    """A reviewer or admin key that is not revoked (the principal itself always is one),
    and not the first person of a double review awaiting its second decision."""
    if assignee != principal.name:
        key = await api_keys.get_by_name(session, assignee)
        if key is None or key.revoked_at is not None or not key.role.allows(AccessRole.REVIEWER):
            raise AppError(
                422,
                "unknown_reviewer",
                f"'{assignee[:100]}' names no reviewer or admin key in use",
            )
    if QueueStatus(item.status) is QueueStatus.AWAITING_SECOND:
        trail = await decisions.for_item(session, item.id)
        if any(row.actor == assignee for row in standing(trail)):
            raise needs_another_reviewer(item, assignee)


async def comments_for(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    *,
    mode: BlindMode,
    now: datetime | None = None,
) -> list[Comment]:
    """The item's comments that `principal` may read, oldest first."""
    require_role(principal, AccessRole.REVIEWER)
    item = await _existing(session, item_id)
    status = queue_items.effective_status(item, now or utcnow())
    pair_audit = (await blind_items.pair_audits(session, [item]))[item.id]
    blind = item_blind_for(
        principal,
        mode,
        audit=item.audit,
        resolved=status is QueueStatus.RESOLVED,
        pair_audit=pair_audit,
    )
    return visible_comments(
        principal,
        await review_threads.comments_of(session, item_id),
        await decisions.for_item(session, item_id),
        blind=blind,
        awaiting_second=status is QueueStatus.AWAITING_SECOND,
    )


async def assignments(
    session: AsyncSession, principal: Principal, item_id: int
) -> list[Assignment]:
    """The item's assignment trail, oldest first: it tells nothing a blind item hides."""
    require_role(principal, AccessRole.REVIEWER)
    await _existing(session, item_id)
    return await review_threads.assignments_of(session, item_id)


async def assignable_names(session: AsyncSession, principal: Principal) -> list[str]:
    """Whom `principal` may assign an item to, by name: for an admin every reviewer or
    admin key in use (and themselves); for a reviewer only themselves."""
    require_role(principal, AccessRole.REVIEWER)
    if principal.role is not AccessRole.ADMIN:
        return [principal.name]
    keys = await api_keys.list_all(session)
    usable = {k.name for k in keys if k.revoked_at is None and k.role.allows(AccessRole.REVIEWER)}
    return sorted(usable | {principal.name})


async def _existing(session: AsyncSession, item_id: int) -> QueueItem:
    item = await queue_items.get(session, item_id)
    if item is None:
        raise NotFound("queue item", item_id)
    return item
