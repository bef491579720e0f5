"""queue_items: a screening waiting for a person (every needs_review, and audit samples)."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db.types import UTCDateTime, utcnow
from app.models.base import Base, one_of

if TYPE_CHECKING:
    from app.models.screening import Screening


class QueueStatus(StrEnum):
    OPEN = "open"
    # Held by `claimed_by` until `claim_expires_at`; a lapsed claim counts as open.
    CLAIMED = "claimed"
    RESOLVED = "resolved"


STATUSES = tuple(s.value for s in QueueStatus)


class QueueItem(Base):
    __tablename__ = "queue_items"
    __table_args__ = (
        # The queue is read oldest first, mostly filtered by status.
        Index("ix_queue_items_status_created_at", "status", "created_at"),
        CheckConstraint(one_of("status", STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # At most one item per screening: queueing twice (a re-run job) adds nothing.
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    status: Mapped[str] = mapped_column(String(16), default=QueueStatus.OPEN.value)
    # The screening's reasons, copied so the queue can be filtered without a join.
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    # A random sample of a passed or flagged outcome, not a needs_review.
    audit: Mapped[bool] = mapped_column(default=False)
    batch_id: Mapped[str | None] = mapped_column(String(36), ForeignKey("batches.id"), index=True)
    # The claimant's key name.
    claimed_by: Mapped[str | None] = mapped_column(String(100))
    claim_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    # Loaded only when asked for (lazy="raise"): async sessions cannot lazy-load.
    screening: Mapped[Screening] = relationship(lazy="raise")
