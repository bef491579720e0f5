"""decisions: what a person decided about a queue item, who, when, why. Append-only.

The trail of an item is its rows in id order: a `decision`, maybe a `reopen` by an admin,
another `decision`... Changes and deletions are refused twice: here, for anything going
through the ORM, and by database triggers (see the 0003 migration) for everything else.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, ForeignKey, String, Text, event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.db.types import UTCDateTime, utcnow
from app.models.base import Base, one_of


class DecisionKind(StrEnum):
    DECISION = "decision"
    REOPEN = "reopen"


class DecisionValue(StrEnum):
    """What a person can decide about a pair."""

    FAITHFUL = "faithful"
    MISMATCH = "mismatch"


KINDS = tuple(k.value for k in DecisionKind)
VALUES = tuple(v.value for v in DecisionValue)
# A decision row carries a value; a reopen row carries none.
VALUE_MATCHES_KIND = (
    "(kind = 'decision' AND decision IS NOT NULL) OR (kind = 'reopen' AND decision IS NULL)"
)


class DecisionIsAppendOnly(Exception):
    """Something tried to change or delete a stored decision."""


class Decision(Base):
    __tablename__ = "decisions"
    __table_args__ = (
        CheckConstraint(one_of("kind", KINDS), name="kind"),
        CheckConstraint(f"decision IS NULL OR {one_of('decision', VALUES)}", name="decision"),
        CheckConstraint(VALUE_MATCHES_KIND, name="value_matches_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"), index=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    decision: Mapped[str | None] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(Text, default="")
    # The acting key's name and access role at the time.
    actor: Mapped[str] = mapped_column(String(100))
    actor_role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


@event.listens_for(Decision, "before_update")
def _refuse_update(_mapper: Mapper[Decision], _connection: Connection, row: Decision) -> None:
    raise DecisionIsAppendOnly(f"decision {row.id} is append-only and cannot be changed")


@event.listens_for(Decision, "before_delete")
def _refuse_delete(_mapper: Mapper[Decision], _connection: Connection, row: Decision) -> None:
    raise DecisionIsAppendOnly(f"decision {row.id} is append-only and cannot be deleted")
