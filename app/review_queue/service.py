"""The reviewers' side of the queue: list, read, claim, release, decide, undo, adjudicate,
reopen, and the pairs decided both ways.

Every function takes the request's session (the caller commits) and the acting
Principal, checks the principal's access role itself (so the API and the reviewer web page
enforce the same rules), and raises AppError with the HTTP meaning of a refusal. What a
transition may do is app/review_queue/transitions.py's to say (read its docstring for the
statuses); here the item is locked, asked about, and the step stored:

- 404 `not_found`: no such item. 403 `forbidden`: the role is not enough (reviewer for
  all; admin to reopen and adjudicate).
- 409 `claimed_by_other`, `not_claimed`, `already_resolved`, `not_resolved`, `disputed`
  (only an admin's adjudication settles it), `not_disputed`, `needs_another_reviewer` (a
  double review's second decision by its first person), `nothing_to_undo`,
  `undo_window_passed`, `pair_has_open_item` (undo or reopen while another item of the
  pair is unresolved). 403 `not_claim_holder`: releasing another reviewer's claim.
- 422 `unknown_defect` (with `allowed`), `defects_need_mismatch`,
  `note_or_defects_required`, `note_required`, `final_decision_required`.

Deciding without holding the claim is a 409, not a 403: no role may do it, and the
caller can fix it by claiming. A claim whose lease lapsed still lets its holder decide
until another reviewer takes the item.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.errors import require_role
from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError, NotFound
from app.models.api_key import AccessRole
from app.models.decision import Decision
from app.models.queue_item import QueueItem
from app.models.rescore import RulingRow
from app.models.screening import Screening
from app.repositories import (
    blind_items,
    decision_conflicts,
    decisions,
    queue_items,
    rescores,
    review_threads,
    screenings,
)
from app.repositories.decision_conflicts import PairConflict
from app.repositories.queue_items import QueueFilters, effective_status
from app.review_queue import choices, transitions
from app.review_queue.transitions import NewRow, Step
from app.review_queue.visibility import BlindMode
from app.settings import Settings
from app.vocabulary import DecisionKind, DecisionValue, QueueStatus

__all__ = [
    "ConflictPage",
    "Decided",
    "ItemDetail",
    "QueueEntry",
    "QueueFilters",
    "QueuePage",
    "ReviewRules",
    "adjudicate",
    "claim",
    "conflicts",
    "decide",
    "get_item",
    "list_items",
    "release",
    "reopen",
    "undo",
]


@dataclass(frozen=True, slots=True)
class ReviewRules:
    """The settings a decision follows (FAITHSCREEN_REVIEW_BLIND, _UNDO_SECONDS and
    _CLAIM_SECONDS); `of(settings)` reads them, the defaults are theirs."""

    blind: BlindMode = "audit"
    undo_seconds: float = 120.0
    claim_seconds: float = 1800.0

    @classmethod
    def of(cls, settings: Settings) -> ReviewRules:
        return cls(
            blind=settings.review_blind,
            undo_seconds=settings.review_undo_seconds,
            claim_seconds=settings.review_claim_seconds,
        )


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """An item (its screening loaded) and its status as of now: a lapsed claim is open.
    `screening_ids`: every screening the item answers for, the opening one first.
    `pair_audit`: the `audit` flag of another, unresolved item of the same pair (a resolved
    item's pair may have one since), None without one: this item shows what that one
    would hide, so it is as blind as that one."""

    item: QueueItem
    status: QueueStatus
    screening_ids: tuple[str, ...] = ()
    pair_audit: bool | None = None
    # The key name the item is assigned to (app/review_queue/threads.py), None: nobody.
    assigned_to: str | None = None


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


@dataclass(frozen=True, slots=True)
class Decided:
    """The row a decision, undo, adjudication or reopen added, and the item's status after.
    `final`: a decision no undo can withdraw (transitions.withdrawable)."""

    row: Decision
    status: QueueStatus
    final: bool = False


@dataclass(frozen=True, slots=True)
class ConflictPage:
    conflicts: list[PairConflict]
    next_cursor: str | None


async def list_items(
    session: AsyncSession,
    principal: Principal,
    filters: QueueFilters | None = None,
    *,
    cursor: str | None = None,
    limit: int = 50,
    now: datetime | None = None,
) -> QueuePage:
    """Oldest first. Raises InvalidCursor (422) for a cursor that is not from this listing."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    items, next_cursor = await queue_items.list_page(
        session, filters or QueueFilters(), cursor=cursor, limit=limit, now=now
    )
    entries = await _entries(session, items, now)
    return QueuePage(entries, next_cursor)


async def get_item(
    session: AsyncSession, principal: Principal, item_id: int, *, now: datetime | None = None
) -> ItemDetail:
    require_role(principal, AccessRole.REVIEWER)
    item = await _existing(session, item_id)
    # Reading the item opens it: the reviewer's time on it runs from their first opening.
    await review_threads.open_item(session, item_id, principal.name, now or utcnow())
    screening = await screenings.get(session, item.screening_id)
    if screening is None:  # a foreign key forbids it
        raise RuntimeError(f"queue item {item_id} names a missing screening")
    trail = await decisions.for_item(session, item_id)
    rulings, readings = await rescores.history(session, item.screening_id)
    [entry] = await _entries(session, [item], now or utcnow())
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
    claiming again extends the claim; a lapsed claim can be taken by anyone; a double
    review awaiting its second decision by anyone but its first person."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    item, trail = await _locked(session, item_id)
    step = transitions.claim(item, trail, principal.name, now=now, seconds=claim_seconds)
    await _move(session, item, step, now)
    return await _current(session, item_id, now)


async def release(
    session: AsyncSession, principal: Principal, item_id: int, *, now: datetime | None = None
) -> QueueEntry:
    """Give the claim back (the holder, or an admin for anyone's claim)."""
    require_role(principal, AccessRole.REVIEWER)
    now = now or utcnow()
    item, _ = await _locked(session, item_id)
    await _move(session, item, transitions.release(item, principal), now)
    return await _current(session, item_id, now)


async def decide(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    decision: DecisionValue,
    note: str = "",
    *,
    defects: Iterable[str] = (),
    rules: ReviewRules | None = None,
    now: datetime | None = None,
) -> Decided:
    """Record the claimant's decision. Faithful or mismatch resolves the item (each
    screening it answers for takes it as `final_decision`; outcomes never change), or, on
    a double review, awaits a second person (then agreement resolves it, disagreement
    makes it `disputed`). `unsure` records the doubt and gives the item back to the queue.
    The row records whether it was decided blind, and when the claim began."""
    require_role(principal, AccessRole.REVIEWER)
    choice = choices.choose(decision, note, defects)
    now = now or utcnow()
    item, trail = await _locked(session, item_id)
    mode = (rules or ReviewRules()).blind
    step = transitions.decide(item, trail, principal, choice, now=now, blind_mode=mode)
    return await _store(session, principal, item, step, now)


async def undo(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    *,
    rules: ReviewRules | None = None,
    now: datetime | None = None,
) -> Decided:
    """The decider withdraws their decision within FAITHSCREEN_REVIEW_UNDO_SECONDS: the
    trail gains a `withdrawal` (nothing is deleted) and the item is theirs again, claimed,
    as it was before they decided."""
    require_role(principal, AccessRole.REVIEWER)
    rules = rules or ReviewRules()
    now = now or utcnow()
    item, trail = await _locked(session, item_id)
    step = transitions.undo(
        item,
        trail,
        principal,
        now=now,
        window_seconds=rules.undo_seconds,
        claim_seconds=rules.claim_seconds,
    )
    return await _store(session, principal, item, step, now)


async def adjudicate(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    decision: DecisionValue,
    note: str = "",
    *,
    defects: Iterable[str] = (),
    now: datetime | None = None,
) -> Decided:
    """An admin who gave neither of its decisions settles a disputed double review, without
    claiming it: resolved, and each screening takes the adjudication as its final decision."""
    require_role(principal, AccessRole.ADMIN)
    choice = choices.choose(decision, note, defects)
    now = now or utcnow()
    item, trail = await _locked(session, item_id)
    step = transitions.adjudicate(item, trail, principal, choice)
    return await _store(session, principal, item, step, now)


async def reopen(
    session: AsyncSession,
    principal: Principal,
    item_id: int,
    note: str = "",
    *,
    now: datetime | None = None,
) -> Decided:
    """An admin sends a resolved item back to the queue: the trail gains a `reopen` row
    (the earlier decisions stay in it) and its screenings' `final_decision` is cleared."""
    require_role(principal, AccessRole.ADMIN)
    now = now or utcnow()
    item, _ = await _locked(session, item_id)
    reopened = await _store(session, principal, item, transitions.reopen(item, note), now)
    await review_threads.forget_openings(session, item_id)
    return reopened


async def conflicts(
    session: AsyncSession, principal: Principal, *, cursor: str | None = None, limit: int = 50
) -> ConflictPage:
    """Pairs whose screenings were decided both faithful and mismatch, on different items
    over time, oldest pair first."""
    require_role(principal, AccessRole.REVIEWER)
    found, next_cursor = await decision_conflicts.page(session, cursor=cursor, limit=limit)
    return ConflictPage(found, next_cursor)


# ---- Storing a step ------------------------------------------------------------------------


async def _locked(session: AsyncSession, item_id: int) -> tuple[QueueItem, list[Decision]]:
    item = await queue_items.lock(session, item_id)
    if item is None:
        raise NotFound("queue item", item_id)
    return item, await decisions.for_item(session, item_id)


async def _store(
    session: AsyncSession, principal: Principal, item: QueueItem, step: Step, now: datetime
) -> Decided:
    await _move(session, item, step, now)
    if step.row is None:  # every step that decides, undoes or reopens appends a row
        raise RuntimeError("a stored step must add a trail row")
    new = step.row
    ruling = new.kind in (DecisionKind.DECISION, DecisionKind.ADJUDICATION)
    opened = await review_threads.opened_at(session, item.id, principal.name) if ruling else None
    row = await decisions.add(
        session,
        queue_item_id=item.id,
        screening_id=item.screening_id,
        kind=new.kind,
        decision=new.decision,
        note=new.note,
        defects=new.defects,
        blind=new.blind,
        claimed_at=new.claimed_at,
        opened_at=opened,
        withdraws_id=new.withdraws_id,
        actor=principal.name,
        actor_role=principal.role,
        at=now,
    )
    if step.resolves is not None or step.unresolves:
        answering = (await queue_items.screening_ids(session, [item.id]))[item.id]
        final = step.resolves
        at = now if step.resolves is not None else None
        await decisions.set_final_decisions(session, answering, final, at=at)
    return Decided(row, step.status, final=_final(item, step, new))


def _final(item: QueueItem, step: Step, new: NewRow) -> bool:
    """No undo can take the row back: an adjudication, or a decision that is final."""
    if new.kind is DecisionKind.ADJUDICATION:
        return True
    undoable = transitions.withdrawable(
        step.status, double_review=item.double_review, blind=new.blind
    )
    return new.kind is DecisionKind.DECISION and not undoable


async def _move(session: AsyncSession, item: QueueItem, step: Step, now: datetime) -> None:
    if step.unresolves:
        await _refuse_second_open_item(session, item)
    try:
        await queue_items.move(
            session,
            item.id,
            step.status,
            step.claim,
            now=now,
            resolving=step.resolves is not None,
            unresolving=step.unresolves,
        )
    except IntegrityError as error:
        # Another item of the pair was queued between the check and this update.
        raise _pair_has_open_item(item, None) from error


async def _refuse_second_open_item(session: AsyncSession, item: QueueItem) -> None:
    other = await queue_items.unresolved_of_pair(session, item.pair_id, other_than=item.id)
    if other is not None:
        raise _pair_has_open_item(item, other)


def _pair_has_open_item(item: QueueItem, other: int | None) -> AppError:
    which = f"queue item {other}" if other is not None else "another queue item"
    return AppError(
        409,
        "pair_has_open_item",
        f"queue item {item.id} cannot leave `resolved`: its pair is waiting on {which} "
        "since (one pair, one question); decide it there",
    )


async def _entries(
    session: AsyncSession, items: Sequence[QueueItem], now: datetime
) -> list[QueueEntry]:
    answering = await queue_items.screening_ids(session, [item.id for item in items])
    pairs = await blind_items.pair_audits(session, items)
    assigned = await review_threads.assignees(session, [item.id for item in items])
    return [
        QueueEntry(
            item,
            effective_status(item, now),
            tuple(answering[item.id]),
            pairs[item.id],
            assigned.get(item.id),
        )
        for item in items
    ]


async def _current(session: AsyncSession, item_id: int, now: datetime) -> QueueEntry:
    [entry] = await _entries(session, [await _existing(session, item_id)], now)
    return entry


async def _existing(session: AsyncSession, item_id: int) -> QueueItem:
    item = await queue_items.get(session, item_id)
    if item is None:
        raise NotFound("queue item", item_id)
    return item
