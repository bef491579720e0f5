"""Lean checks: one per screening, appended once, read back by screening. There is no
update path: the ORM model and database triggers both refuse to change a stored check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.lean import LeanCall, LeanReading
from app.models.lean_check import LeanCheck
from app.repositories.conflicts import insert_unless_exists


@dataclass(frozen=True, slots=True)
class LeanCheckRecord:
    call: LeanCall
    reading: LeanReading
    screening_id: str

    def row(self) -> dict[str, Any]:
        call, reading = self.call, self.reading
        return {
            "screening_id": self.screening_id,
            "server_url": call.server_url,
            "server_version": call.server_version,
            "snippet_id": call.snippet_id,
            "code": call.code,
            "timeout_seconds": call.timeout_seconds,
            "http_status": call.http_status,
            "raw_body": call.raw_body,
            "failure": call.failure,
            "error": call.error,
            "status": reading.status,
            "messages": [message.as_json() for message in reading.messages],
            "goal": reading.goal,
            "detail": reading.detail,
            "reader_version": reading.reader_version,
            "latency_ms": call.latency_ms,
            "attempts": call.attempts,
        }


async def add(session: AsyncSession, record: LeanCheckRecord) -> bool:
    """Store the check; False (and nothing changed) if the screening has one already."""
    return await insert_unless_exists(session, LeanCheck, record.row(), ("screening_id",))


async def for_screening(session: AsyncSession, screening_id: str) -> LeanCheck | None:
    statement = select(LeanCheck).where(LeanCheck.screening_id == screening_id)
    return (await session.execute(statement)).scalar_one_or_none()


async def for_screenings(
    session: AsyncSession, screening_ids: Sequence[str]
) -> dict[str, LeanCheck]:
    """The checks of these screenings, by screening id, in one query."""
    if not screening_ids:
        return {}
    statement = select(LeanCheck).where(LeanCheck.screening_id.in_(screening_ids))
    return {row.screening_id: row for row in (await session.execute(statement)).scalars()}
