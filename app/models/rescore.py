"""rescores, readings, rulings: what re-scoring wrote, next to (never over) what was stored.

A `rescores` row is one applied run: who, when, over what, under which versions. Each
`readings` row is a stored review read again under a new parser version; each `rulings` row
an outcome decided under new versions (plus, once per screening, the ruling it replaced, so
the whole history is in one table). Both are logs, not keyed by version: rolling a parser
back and forth appends rows, and applying a run twice appends nothing (the second run finds
no change). Reviews are never changed; the screening row carries
the current outcome, and `rulings` every outcome it has had.

Readings and rulings are append-only: the ORM refuses changes and deletions here, database
triggers (the 0004 migration) refuse them for everything else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.clock import utcnow
from app.db.types import ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import OUTCOMES, Outcome, ParseStatus, Verdict


class RescoreRowIsAppendOnly(Exception):
    """Something tried to change or delete a stored reading or ruling."""


class Rescore(Base):
    __tablename__ = "rescores"

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    # The key name that asked (API), or "cli".
    actor: Mapped[str] = mapped_column(String(100))
    # {"batch_id": ...} | {"since": ...} | {"all": true}
    scope: Mapped[dict[str, Any]] = mapped_column(JSON)
    parser_version: Mapped[str] = mapped_column(String(64))
    policy_version: Mapped[str] = mapped_column(String(64))
    evidence_version: Mapped[str] = mapped_column(String(64))
    # The diff the run applied (counts, transitions, reasons), as `rescore` printed it.
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ReadingRow(Base):
    __tablename__ = "readings"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    # A review's current reading is its latest row here (highest id), else its own columns.
    review_id: Mapped[int] = mapped_column(ForeignKey("reviews.id"), index=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), index=True)
    rescore_id: Mapped[str] = mapped_column(ForeignKey("rescores.id"), index=True)
    verdict: Mapped[Verdict] = mapped_column(StrEnumType(Verdict, 16))
    parse_status: Mapped[ParseStatus] = mapped_column(StrEnumType(ParseStatus, 32))
    # Read again from a stored reply: whatever it held (U+0000...), as reviews store it.
    back_translation: Mapped[str | None] = mapped_column(ProviderText())
    issues: Mapped[str | None] = mapped_column(ProviderText())
    parser_version: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RulingRow(Base):
    __tablename__ = "rulings"
    __table_args__ = (CheckConstraint(one_of("outcome", OUTCOMES), name="outcome"),)

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), index=True)
    # None for the ruling the pipeline made (kept here when a rescore first replaces it).
    rescore_id: Mapped[str | None] = mapped_column(ForeignKey("rescores.id"), index=True)
    outcome: Mapped[Outcome] = mapped_column(StrEnumType(Outcome, 16))
    reasons: Mapped[list[str]] = mapped_column(JSON)
    evidence: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    # The parser version(s) of the readings decided on, comma-separated when they differ.
    parser_version: Mapped[str] = mapped_column(String(200))
    policy_version: Mapped[str] = mapped_column(String(64))
    evidence_version: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def _refuse(kind: str) -> Any:
    def refuse(_mapper: Mapper[Any], _connection: Connection, row: Any) -> None:
        raise RescoreRowIsAppendOnly(f"{row.__tablename__} {row.id} is append-only ({kind})")

    return refuse


for _model in (ReadingRow, RulingRow):
    event.listen(_model, "before_update", _refuse("cannot be changed"))
    event.listen(_model, "before_delete", _refuse("cannot be deleted"))
