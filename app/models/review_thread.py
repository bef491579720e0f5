"""What people do around a queue item besides deciding it: when each reviewer first opened
it (`item_openings`, the start of their time on it), the comments on it (`comments`) and
who it is assigned to (`assignments`). Comments and assignments are append-only, like
decisions: the ORM refuses changes here, and triggers (migration 0017) refuse them in the
database. An item's assignee is its latest assignment row (NULL: unassigned), so the rows
are the audit of who assigned whom, when."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint, event
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.clock import utcnow
from app.db.types import StrEnumType, UTCDateTime
from app.models.api_key import AccessRole
from app.models.base import Base


class ThreadRowIsAppendOnly(Exception):
    """Something tried to change or delete a stored comment or assignment."""


class ItemOpening(Base):
    """When a reviewer first opened an item (in the round since its last reopen, which
    forgets the item's openings): their time on it runs from here to their decision."""

    __tablename__ = "item_openings"
    __table_args__ = (UniqueConstraint("queue_item_id", "actor"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"))
    # The reviewer's key name.
    actor: Mapped[str] = mapped_column(String(100))
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Comment(Base):
    """A comment on a queue item. Append-only."""

    __tablename__ = "comments"

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"), index=True)
    body: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String(100))
    actor_role: Mapped[AccessRole] = mapped_column(StrEnumType(AccessRole, 16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Assignment(Base):
    """An item assigned to a reviewer (`assignee`), or unassigned (NULL), by `actor`.
    Append-only: the latest row of an item is who it is assigned to now."""

    __tablename__ = "assignments"
    # The current assignee of an item is read by its latest row; "mine" by assignee.
    __table_args__ = (
        Index("ix_assignments_queue_item_id_id", "queue_item_id", "id"),
        Index("ix_assignments_assignee", "assignee"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"))
    assignee: Mapped[str | None] = mapped_column(String(100))
    actor: Mapped[str] = mapped_column(String(100))
    actor_role: Mapped[AccessRole] = mapped_column(StrEnumType(AccessRole, 16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


def _refuse_update(_mapper: Mapper[object], _connection: Connection, row: object) -> None:
    raise ThreadRowIsAppendOnly(f"{type(row).__name__} rows are append-only")


for _table in (Comment, Assignment):
    event.listen(_table, "before_update", _refuse_update)
    event.listen(_table, "before_delete", _refuse_update)
