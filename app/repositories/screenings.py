"""Screenings: adding, reading, listing newest first, and recording the one outcome."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Select, and_, or_, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import joinedload, selectinload

from app.db.types import utcnow
from app.models.screening import Screening
from app.vocabulary import ScreeningStatus

DONE = ScreeningStatus.DONE.value


async def add(
    session: AsyncSession,
    *,
    pair_id: int,
    external_id: str | None,
    batch_id: str | None,
    confirmations: int,
    status: str = ScreeningStatus.QUEUED.value,
) -> Screening:
    screening = Screening(
        pair_id=pair_id,
        external_id=external_id,
        batch_id=batch_id,
        confirmations=confirmations,
        status=status,
    )
    session.add(screening)
    await session.flush()
    return screening


async def get(session: AsyncSession, screening_id: str) -> Screening | None:
    """The screening with its pair and its reviews (ordered by role, attempt), fresh from
    the database even if this session already holds it."""
    statement = (
        select(Screening)
        .where(Screening.id == screening_id)
        .options(joinedload(Screening.pair), selectinload(Screening.reviews))
        .execution_options(populate_existing=True)
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def list_page(
    session: AsyncSession,
    *,
    external_id: str | None = None,
    outcome: str | None = None,
    status: str | None = None,
    batch_id: str | None = None,
    cursor: str | None = None,
    limit: int,
) -> tuple[list[Screening], str | None]:
    """One page, newest first (pair loaded, reviews not), and the cursor of the next page
    (None on the last). Raises ValueError for a cursor this function did not make."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    filters = {"external_id": external_id, "outcome": outcome, "status": status}
    statement = _filtered(filters | {"batch_id": batch_id})
    if cursor is not None:
        statement = statement.where(_before(*decode_cursor(cursor)))
    statement = statement.order_by(Screening.created_at.desc(), Screening.id.desc())
    rows = list((await session.execute(statement.limit(limit + 1))).scalars())
    page = rows[:limit]
    return page, encode_cursor(page[-1]) if len(rows) > limit else None


def _filtered(filters: Mapping[str, str | None]) -> Select[Screening]:
    statement = select(Screening).options(joinedload(Screening.pair))
    for column, value in filters.items():
        if value is not None:
            statement = statement.where(getattr(Screening, column) == value)
    return statement


def _before(created_at: datetime, screening_id: str) -> ColumnElement[bool]:
    """Rows strictly after (created_at, id) in newest-first order."""
    return or_(
        Screening.created_at < created_at,
        and_(Screening.created_at == created_at, Screening.id < screening_id),
    )


def encode_cursor(screening: Screening) -> str:
    raw = f"{screening.created_at.isoformat()}|{screening.id}".encode()
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("utf-8")
        stamp, sep, screening_id = raw.partition("|")
        created_at = datetime.fromisoformat(stamp)
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise ValueError("not a cursor from this listing") from error
    if not sep or not screening_id or created_at.tzinfo is None:
        raise ValueError("not a cursor from this listing")
    return created_at, screening_id


async def mark_running(session: AsyncSession, screening_id: str) -> bool:
    """queued (or running, on a re-run) -> running; a done screening stays done."""
    statement = (
        update(Screening)
        .where(Screening.id == screening_id, Screening.status != DONE)
        .values(status=ScreeningStatus.RUNNING.value)
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


async def record_outcome(
    session: AsyncSession,
    screening_id: str,
    *,
    outcome: str,
    reasons: Sequence[str],
    evidence: Sequence[Mapping[str, object]],
    policy_version: str | None,
    evidence_version: str | None,
    error: str | None = None,
) -> bool:
    """Finish the screening with `outcome` unless it is already done; True if this call did.

    One conditional UPDATE, so of two racing writers exactly one records an outcome.
    """
    statement = (
        update(Screening)
        .where(Screening.id == screening_id, Screening.status != DONE)
        .values(
            status=DONE,
            outcome=str(outcome),
            reasons=[str(reason) for reason in reasons],
            evidence=[dict(finding) for finding in evidence],
            policy_version=policy_version,
            evidence_version=evidence_version,
            error=error,
            finished_at=utcnow(),
        )
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1
