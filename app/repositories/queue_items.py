"""The review queue: adding items, listing them oldest first, and the claim, release,
resolve and reopen transitions, each one conditional UPDATE.

Time is the application's clock, passed in as `now`. A claim is held by `claimed_by` until
`claim_expires_at`; once that passes the item counts as open (`effective_status`) and any
reviewer may claim it, though the row still says `claimed` until someone does.

Every transition is a single UPDATE whose WHERE states what must be true, and the caller
checks that exactly one row changed: of two reviewers claiming at once exactly one wins
(on PostgreSQL the second waits for the first's row lock and then re-checks the WHERE
against the committed row; SQLite runs one writer at a time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, and_, exists, func, insert, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import joinedload

from app.db.types import utcnow
from app.models.queue_item import QueueItem, QueueStatus
from app.models.screening import Screening
from app.repositories.conflicts import insert_unless_exists
from app.repositories.keyset import decode_numbered_cursor, encode_cursor

OPEN = QueueStatus.OPEN.value
CLAIMED = QueueStatus.CLAIMED.value
RESOLVED = QueueStatus.RESOLVED.value


@dataclass(frozen=True, slots=True, kw_only=True)
class NewQueueItem:
    screening_id: str
    reasons: Sequence[str]
    audit: bool
    batch_id: str | None

    def row(self, now: datetime) -> dict[str, Any]:
        return {
            "screening_id": self.screening_id,
            "status": OPEN,
            "reasons": [str(reason) for reason in self.reasons],
            "audit": self.audit,
            "batch_id": self.batch_id,
            "created_at": now,
            "updated_at": now,
        }


async def add(session: AsyncSession, new: NewQueueItem) -> bool:
    """Queue the screening; False (nothing changed) if it has an item already."""
    return await insert_unless_exists(session, QueueItem, new.row(utcnow()), ["screening_id"])


async def add_many(session: AsyncSession, new: Sequence[NewQueueItem]) -> None:
    """Queue new screenings with one executemany (refused if one has an item already)."""
    if new:
        now = utcnow()
        table = cast(Table, QueueItem.__table__)
        await session.execute(insert(table), [item.row(now) for item in new])


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
    return QueueStatus(item.status)


# ---- Listing --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class QueueFilters:
    """Listing filters; None means any. `reason` matches a reason exactly, or the kind
    before its colon (`evidence_review` matches `evidence_review:contract_text_in_input`)."""

    status: QueueStatus | None = None
    reason: str | None = None
    batch_id: str | None = None
    audit: bool | None = None


async def list_page(
    session: AsyncSession,
    filters: QueueFilters,
    *,
    cursor: str | None,
    limit: int,
    now: datetime | None = None,
) -> tuple[list[QueueItem], str | None]:
    """One page, oldest first (each item's screening loaded), and the next page's
    cursor (None on the last). Raises ValueError for a cursor this function did not make."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    statement = select(QueueItem).options(joinedload(QueueItem.screening))
    for condition in _conditions(session, filters, now or utcnow()):
        statement = statement.where(condition)
    if cursor is not None:
        statement = statement.where(_after(*decode_numbered_cursor(cursor)))
    statement = statement.order_by(QueueItem.created_at, QueueItem.id).limit(limit + 1)
    rows = list((await session.execute(statement)).scalars())
    page = rows[:limit]
    return page, encode_cursor(page[-1].created_at, page[-1].id) if len(rows) > limit else None


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
    return conditions


def _lapsed(now: datetime) -> ColumnElement[bool]:
    return and_(QueueItem.status == CLAIMED, QueueItem.claim_expires_at <= now)


def _status_is(status: QueueStatus, now: datetime) -> ColumnElement[bool]:
    if status is QueueStatus.OPEN:
        return or_(QueueItem.status == OPEN, _lapsed(now))
    if status is QueueStatus.CLAIMED:
        return and_(QueueItem.status == CLAIMED, QueueItem.claim_expires_at > now)
    return QueueItem.status == RESOLVED


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


def _after(created_at: datetime, item_id: int) -> ColumnElement[bool]:
    """Rows strictly after (created_at, id) in oldest-first order."""
    return or_(
        QueueItem.created_at > created_at,
        and_(QueueItem.created_at == created_at, QueueItem.id > item_id),
    )


# ---- Transitions ----------------------------------------------------------------------------


async def _transition(
    session: AsyncSession,
    item_id: int,
    condition: ColumnElement[bool],
    values: Mapping[str, Any],
) -> bool:
    statement = (
        update(QueueItem)
        .where(QueueItem.id == item_id, condition)
        .values(dict(values))
        .execution_options(synchronize_session=False)
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


async def claim(
    session: AsyncSession, item_id: int, claimant: str, *, expires_at: datetime, now: datetime
) -> bool:
    """Claim until `expires_at` an item that is open, whose claim lapsed, or that
    `claimant` holds already (which extends the claim). False if none of these holds."""
    takeable = or_(QueueItem.status == OPEN, _lapsed(now), _held_by(claimant))
    values = {"status": CLAIMED, "claimed_by": claimant, "claim_expires_at": expires_at}
    return await _transition(session, item_id, takeable, values | {"updated_at": now})


def _held_by(claimant: str) -> ColumnElement[bool]:
    return and_(QueueItem.status == CLAIMED, QueueItem.claimed_by == claimant)


async def release(
    session: AsyncSession, item_id: int, *, holder: str | None, now: datetime
) -> bool:
    """Back to open. `holder`: only if this name holds the claim; None: whoever holds it."""
    held = _held_by(holder) if holder is not None else QueueItem.status == CLAIMED
    values = {"status": OPEN, "claimed_by": None, "claim_expires_at": None, "updated_at": now}
    return await _transition(session, item_id, held, values)


async def resolve(session: AsyncSession, item_id: int, claimant: str, *, now: datetime) -> bool:
    """Resolve an item `claimant` holds. A lapsed claim still counts until another
    reviewer takes the item: a lapse only lets others in, it does not void the holder's
    work. False if `claimant` does not hold it (or it is resolved)."""
    values = {
        "status": RESOLVED,
        "claimed_by": None,
        "claim_expires_at": None,
        "resolved_at": now,
        "updated_at": now,
    }
    return await _transition(session, item_id, _held_by(claimant), values)


async def reopen(session: AsyncSession, item_id: int, *, now: datetime) -> bool:
    """A resolved item back to open; False if it is not resolved."""
    values = {"status": OPEN, "resolved_at": None, "updated_at": now}
    return await _transition(session, item_id, QueueItem.status == RESOLVED, values)


async def add_many_unless_queued(session: AsyncSession, new: Sequence[NewQueueItem]) -> None:
    """`add` for many screenings in one executemany: one that has an item already is
    skipped (a re-run job, say), not refused."""
    if new:
        now = utcnow()
        dialect = session.get_bind().dialect.name
        insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
        table = cast(Table, QueueItem.__table__)
        statement = insert_of(table).on_conflict_do_nothing(index_elements=["screening_id"])
        await session.execute(statement, [item.row(now) for item in new])
