"""lean_checks: one Lean server's answer about a screening's pair. Append-only, like a
review: the raw body is kept exactly as received, and a row is never changed.

Changes are refused twice: here, for anything going through the ORM, and by database
triggers (migration 0016_lean_checks) for everything else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.clock import utcnow
from app.db.types import ProviderString, ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import LeanStatus

LEAN_STATUSES = tuple(status.value for status in LeanStatus)


class LeanCheckIsAppendOnly(Exception):
    """Something tried to change a stored Lean check."""


class LeanCheck(Base):
    __tablename__ = "lean_checks"
    __table_args__ = (CheckConstraint(one_of("status", LEAN_STATUSES), name="status"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    # One check per screening: a screening run again after a crash reads it, never asks twice.
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    # Where it was asked (no credentials), and the server's version when it said.
    server_url: Mapped[str] = mapped_column(String(2048))
    server_version: Mapped[str | None] = mapped_column(ProviderString(64))
    snippet_id: Mapped[str] = mapped_column(String(64))
    # The snippet sent: the header, a newline, the formal statement (lines as Lean counts).
    code: Mapped[str] = mapped_column(ProviderText())
    timeout_seconds: Mapped[int]
    http_status: Mapped[int | None]
    # Byte for byte what the server sent (a failed call's with credentials redacted).
    raw_body: Mapped[str | None] = mapped_column(ProviderText(raw=True))
    # Why no body could be read as an answer ("timeout", "connection error", ...).
    failure: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(ProviderText())
    status: Mapped[LeanStatus] = mapped_column(StrEnumType(LeanStatus, 16))
    # [{severity, line, column, end_line, end_column, data}], as read from the body.
    messages: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # The elaborated statement (the first sorry's goal), when Lean gave one.
    goal: Mapped[str | None] = mapped_column(ProviderText())
    # Why the status is not ok or error, in a sentence.
    detail: Mapped[str | None] = mapped_column(ProviderText())
    # The reader that read `raw_body` into status, messages and goal (app/lean/body.py's
    # LEAN_READER_VERSION); rows stored before readers had versions hold `lean-1` (0019).
    reader_version: Mapped[str | None] = mapped_column(String(16))
    latency_ms: Mapped[int | None]
    attempts: Mapped[int] = mapped_column(default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


@event.listens_for(LeanCheck, "before_update")
def _refuse_update(_mapper: Mapper[LeanCheck], _connection: Connection, row: LeanCheck) -> None:
    raise LeanCheckIsAppendOnly(f"Lean check {row.id} is append-only and cannot be changed")
