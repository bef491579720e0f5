"""The review queue: adding items (one pair, one question), listing them oldest first,
and moving an item from one status to another.

Time is the application's clock, passed in as `now`. A claim is held by `claimed_by` until
`claim_expires_at`; once that passes the item counts as open (`effective_status`) and any
reviewer may claim it, though the row still says `claimed` until someone does.

What a transition may do is decided by app/review_queue/transitions.py from the item and
its trail, both read after `lock`: the item's row is locked until the transaction ends
(a row lock on PostgreSQL, the write lock on SQLite), so of two reviewers acting at once
the second waits for the first and then reads what the first did.

A pair has at most one unresolved item (`open_pair_id` is unique and NULL once resolved):
a new screening of a pair with an unresolved item joins it (`queue_item_screenings`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, and_, bindparam, exists, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import joinedload

from app.clock import utcnow
from app.models.queue_item import Claim, QueueItem, QueueItemScreening
from app.models.screening import Screening
from app.repositories import keyset, queue_search, review_threads
from app.repositories.blind_items import in_blind_pair
from app.vocabulary import QueueStatus

OPEN = QueueStatus.OPEN
CLAIMED = QueueStatus.CLAIMED
# Rounds of open-or-join: another transaction can resolve the item a pair had between our
# conflict and our look-up (rare), and the next round opens a new one.
ENQUEUE_ROUNDS = 3


@dataclass(frozen=True, slots=True, kw_only=True)
class NewQueueItem:
    screening_id: str
    reasons: Sequence[str]
    audit: bool
    batch_id: str | None
    # Two different people must decide (sampled at FAITHSCREEN_REVIEW_DOUBLE_RATE).
    double_review: bool = False

    def row(self, pair_id: int, now: datetime) -> dict[str, Any]:
        return {
            "screening_id": self.screening_id,
            "pair_id": pair_id,
            "open_pair_id": pair_id,
            "status": OPEN,
            "reasons": [str(reason) for reason in self.reasons],
            "audit": self.audit,
            "double_review": self.double_review,
            "batch_id": self.batch_id,
            "created_at": now,
            "updated_at": now,
        }


async def add(session: AsyncSession, new: NewQueueItem) -> bool:
    """Queue the screening (see `add_many`); False if it waits on an item already."""
    return await add_many(session, [new]) == 1


async def add_many(session: AsyncSession, new: Sequence[NewQueueItem]) -> int:
    """Queue screenings, one pair one question: a screening whose pair has an unresolved
    item joins it (its reasons are added to the item's), the others open one item per
    pair. One that waits on an item already (a re-run job) is skipped. Returns how many
    screenings now wait on an item because of this call.

    Race-safe: of two transactions opening an item for one pair at once, the unique
    `open_pair_id` lets one insert and makes the other wait for it, then join it. A joined
    item is locked (as `lock` does) so that nobody resolves it before the join commits."""
    if not new:  # a chunk of queued screenings only: no query at all
        return 0
    pending = list({item.screening_id: item for item in new}.values())
    placed = 0
    for _ in range(ENQUEUE_ROUNDS):
        waiting = await _waiting(session, [item.screening_id for item in pending])
        pending = [item for item in pending if item.screening_id not in waiting]
        if not pending:
            return placed
        pair_of = await _pairs_of(session, [item.screening_id for item in pending])
        now = utcnow()
        await _open(session, pending, pair_of, now)
        items = await _lock_unresolved(session, set(pair_of.values()))
        joining = [(items[pair_of[n.screening_id]], n) for n in pending]
        await _join(session, [(i, n) for i, n in joining if i is not None], now)
        placed += sum(1 for i, _ in joining if i is not None)
        pending = [n for i, n in joining if i is None]
        if not pending:
            return placed
    raise RuntimeError(f"{len(pending)} screenings found no unresolved item for their pair")


async def _waiting(session: AsyncSession, screening_ids: Sequence[str]) -> set[str]:
    """Those of `screening_ids` that some item answers for already."""
    joined = select(QueueItemScreening.screening_id).where(
        QueueItemScreening.screening_id.in_(screening_ids)
    )
    opened = select(QueueItem.screening_id).where(QueueItem.screening_id.in_(screening_ids))
    return set((await session.execute(joined.union(opened))).scalars())


async def _pairs_of(session: AsyncSession, screening_ids: Sequence[str]) -> dict[str, int]:
    statement = select(Screening.id, Screening.pair_id).where(Screening.id.in_(screening_ids))
    return {screening_id: pair_id for screening_id, pair_id in await session.execute(statement)}


async def _open(
    session: AsyncSession,
    pending: Sequence[NewQueueItem],
    pair_of: dict[str, int],
    now: datetime,
) -> None:
    """An item for each pair, opened by its first pending screening, unless the pair has
    an unresolved item (or the screening an item): ON CONFLICT DO NOTHING on both."""
    openers: dict[int, NewQueueItem] = {}
    for item in pending:
        openers.setdefault(pair_of[item.screening_id], item)
    # In pair order: two transactions inserting the same pairs wait on each other in one
    # order, never in a cycle.
    rows = [openers[pair].row(pair, now) for pair in sorted(openers)]
    dialect = session.get_bind().dialect.name
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    statement = insert_of(cast(Table, QueueItem.__table__)).on_conflict_do_nothing()
    await session.execute(statement, rows)


@dataclass(frozen=True, slots=True)
class _Unresolved:
    id: int
    screening_id: str
    reasons: list[str]


async def _lock_unresolved(
    session: AsyncSession, pair_ids: set[int]
) -> defaultdict[int, _Unresolved | None]:
    """The unresolved item of each of `pair_ids`, locked, by pair id (None for none)."""
    statement = (
        select(QueueItem.open_pair_id, QueueItem.id, QueueItem.screening_id, QueueItem.reasons)
        .where(QueueItem.open_pair_id.in_(pair_ids))
        .order_by(QueueItem.id)
        .with_for_update()
    )
    found: defaultdict[int, _Unresolved | None] = defaultdict(lambda: None)
    for pair, id_, opener, reasons in await session.execute(statement):
        if pair is not None:  # the WHERE says so
            found[pair] = _Unresolved(id_, opener, list(reasons))
    return found


async def _join(
    session: AsyncSession, joining: Sequence[tuple[_Unresolved, NewQueueItem]], now: datetime
) -> None:
    """Each screening answers for its item; an item joined by another screening takes
    the reasons it brings (so a reason filter finds it)."""
    if not joining:
        return
    dialect = session.get_bind().dialect.name
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    rows = [
        {"queue_item_id": item.id, "screening_id": new.screening_id, "created_at": now}
        for item, new in joining
    ]
    table = cast(Table, QueueItemScreening.__table__)
    await session.execute(insert_of(table).on_conflict_do_nothing(), rows)
    reasons: dict[int, list[str]] = {}
    for item, new in joining:
        have = reasons.setdefault(item.id, list(item.reasons))
        have += [str(r) for r in new.reasons if str(r) not in have]
    changed = [
        {"item_id": item.id, "reasons": reasons[item.id], "now": now}
        for item in {item.id: item for item, _ in joining}.values()
        if reasons[item.id] != item.reasons
    ]
    if changed:
        table = cast(Table, QueueItem.__table__)
        statement = (
            update(table)
            .where(table.c.id == bindparam("item_id"))
            .values(reasons=bindparam("reasons"), updated_at=bindparam("now"))
        )
        await session.execute(statement, changed)


async def batch_of(session: AsyncSession, screening_id: str) -> str | None:
    """The batch the screening belongs to (None outside a batch)."""
    statement = select(Screening.batch_id).where(Screening.id == screening_id)
    return (await session.execute(statement)).scalar_one_or_none()


async def get(session: AsyncSession, item_id: int) -> QueueItem | None:
    """The item with its screening, fresh from the database even if this session already
    holds them."""
    statement = (
        select(QueueItem)
        .where(QueueItem.id == item_id)
        .options(joinedload(QueueItem.screening))
        .execution_options(populate_existing=True)
    )
    return (await session.execute(statement)).scalar_one_or_none()


def effective_status(item: QueueItem, now: datetime) -> QueueStatus:
    """The item's status, a lapsed claim counting as open."""
    lapsed = item.claim_expires_at is not None and item.claim_expires_at <= now
    if item.status == CLAIMED and lapsed:
        return QueueStatus.OPEN
    return item.status


# ---- Listing --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """Listing filters; None means any. `reason` matches a reason exactly, or the kind
    before its colon (`evidence_review` matches `evidence_review:contract_text_in_input`)."""

    status: QueueStatus | None = None
    reason: str | None = None
    batch_id: str | None = None
    audit: bool | None = None
    # Unresolved items with one of these `audit` values are blind to the caller (none for an
    # admin; see blind_items.is_blind_item), and so are the other items of their pair: a
    # `reason` filter never matches them (their reasons are withheld), nor an `audit` filter
    # when `audit_withheld` (their flag is withheld too). Else a filter would tell the
    # caller what the item hides.
    blind_audits: tuple[bool, ...] = ()
    audit_withheld: bool = False
    # Free text in the statements or external ids (app/repositories/queue_search.py), and
    # the key name the item is assigned to ("mine").
    text: str | None = None
    assigned_to: str | None = None


_OLDEST_FIRST = keyset.Order(QueueItem.created_at, QueueItem.id, newest_first=False, numbered=True)


async def list_page(
    session: AsyncSession,
    filters: QueueFilters,
    *,
    cursor: str | None,
    limit: int,
    now: datetime | None = None,
) -> tuple[list[QueueItem], str | None]:
    """One page, oldest first (each item's screening loaded), and the next page's
    cursor (None on the last). Raises InvalidCursor for a cursor this function did not make."""
    statement = select(QueueItem).options(joinedload(QueueItem.screening))
    for condition in _conditions(session, filters, now or utcnow()):
        statement = statement.where(condition)
    return await keyset.page(session, statement, _OLDEST_FIRST, cursor=cursor, limit=limit)


def _conditions(
    session: AsyncSession, filters: QueueFilters, now: datetime
) -> list[ColumnElement[bool]]:
    conditions: list[ColumnElement[bool]] = []
    if filters.status is not None:
        conditions.append(_status_is(filters.status, now))
    if filters.reason is not None:
        conditions.append(_has_reason(filters.reason, session.get_bind().dialect.name))
    if filters.batch_id is not None:
        conditions.append(QueueItem.batch_id == filters.batch_id)
    if filters.audit is not None:
        conditions.append(QueueItem.audit.is_(filters.audit))
    blind = in_blind_pair(filters.blind_audits)
    audit_told = filters.audit is not None and filters.audit_withheld
    if blind is not None and (filters.reason is not None or audit_told):
        conditions.append(~blind)
    if filters.text:
        conditions.append(queue_search.matching(filters.text, blind))
    if filters.assigned_to is not None:
        conditions.append(review_threads.assigned_to(filters.assigned_to))
    return conditions


def _lapsed(now: datetime) -> ColumnElement[bool]:
    return and_(QueueItem.status == CLAIMED, QueueItem.claim_expires_at <= now)


def _status_is(status: QueueStatus, now: datetime) -> ColumnElement[bool]:
    if status is QueueStatus.OPEN:
        return or_(QueueItem.status == OPEN, _lapsed(now))
    if status is QueueStatus.CLAIMED:
        return and_(QueueItem.status == CLAIMED, QueueItem.claim_expires_at > now)
    return QueueItem.status == status


def _has_reason(reason: str, dialect: str) -> ColumnElement[bool]:
    """Some entry of the item's JSON `reasons` is `reason` or starts with `reason:`."""
    if dialect == "postgresql":
        entries = func.json_array_elements_text(QueueItem.reasons).table_valued("value")
        # Named columns (AS anon(value)): PostgreSQL calls a bare scalar function's column
        # after the alias, not "value".
        entries = entries.render_derived()
    else:
        entries = func.json_each(QueueItem.reasons).table_valued("value")
    value = entries.c.value
    matches = or_(value == reason, value.startswith(f"{reason}:", autoescape=True))
    return exists(select(1).select_from(entries).where(matches))


# ---- Transitions ----------------------------------------------------------------------------


async def lock(session: AsyncSession, item_id: int) -> QueueItem | None:
    """The item (with its screening), its row locked until the transaction ends, read
    after any transaction that held it committed."""
    if session.get_bind().dialect.name == "sqlite":
        # No row locks: a write takes the database's one write lock, held until commit.
        touch = (
            update(QueueItem)
            .where(QueueItem.id == item_id)
            .values(updated_at=QueueItem.updated_at)
            .execution_options(synchronize_session=False)
        )
        await session.execute(touch)
    else:
        locked = select(QueueItem.id).where(QueueItem.id == item_id).with_for_update()
        await session.execute(locked)
    return await get(session, item_id)


async def move(
    session: AsyncSession,
    item_id: int,
    status: QueueStatus,
    claim: Claim | None,
    *,
    now: datetime,
    resolving: bool = False,
    unresolving: bool = False,
) -> None:
    """Set the item's status and claim (None: nobody holds it). `resolving`: it is
    resolved now and no longer its pair's open item; `unresolving`: it is its pair's open
    item again (an IntegrityError if another item of the pair is unresolved)."""
    values: dict[str, Any] = {
        "status": status,
        "claimed_by": claim.holder if claim else None,
        "claim_expires_at": claim.expires_at if claim else None,
        "claimed_at": claim.began_at if claim else None,
        "updated_at": now,
    }
    if resolving:
        values |= {"resolved_at": now, "open_pair_id": None}
    if unresolving:
        values |= {"resolved_at": None, "open_pair_id": QueueItem.pair_id}
    statement = (
        update(QueueItem)
        .where(QueueItem.id == item_id)
        .values(values)
        .execution_options(synchronize_session=False)
    )
    await session.execute(statement)


async def unresolved_of_pair(
    session: AsyncSession, pair_id: int | None, *, other_than: int
) -> int | None:
    """The id of the pair's unresolved item, if it is not `other_than`."""
    if pair_id is None:
        return None
    statement = select(QueueItem.id).where(
        QueueItem.open_pair_id == pair_id, QueueItem.id != other_than
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def screening_ids(session: AsyncSession, item_ids: Sequence[int]) -> dict[int, list[str]]:
    """The screenings each item answers for: the one that opened it first, then those that
    joined it, in the order they did."""
    found: dict[int, list[str]] = {item_id: [] for item_id in item_ids}
    opened = select(QueueItem.id, QueueItem.screening_id).where(QueueItem.id.in_(item_ids))
    for item_id, screening_id in await session.execute(opened):
        found[item_id].append(screening_id)
    joined = (
        select(QueueItemScreening.queue_item_id, QueueItemScreening.screening_id)
        .where(QueueItemScreening.queue_item_id.in_(item_ids))
        .order_by(QueueItemScreening.id)
    )
    for item_id, screening_id in await session.execute(joined):
        if screening_id not in found[item_id]:
            found[item_id].append(screening_id)
    return found
