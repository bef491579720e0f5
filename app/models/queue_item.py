"""queue_items: a screening waiting for a person (every needs_review, and audit samples)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import JSON, CheckConstraint, ForeignKey, Index, String, false
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.clock import utcnow
from app.db.types import StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import QueueStatus

if TYPE_CHECKING:
    from app.models.screening import Screening


STATUSES = tuple(s.value for s in QueueStatus)


@dataclass(frozen=True, slots=True)
class Claim:
    """Who holds an item, until when, and since when (kept when the holder extends it: a
    decision records it, for the time spent on an item)."""

    holder: str
    expires_at: datetime
    began_at: datetime


class QueueItem(Base):
    __tablename__ = "queue_items"
    __table_args__ = (
        # The queue is read oldest first, mostly filtered by status.
        Index("ix_queue_items_status_created_at", "status", "created_at"),
        CheckConstraint(one_of("status", STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    # The screening that opened the item. At most one item per screening: queueing twice (a
    # re-run job) adds nothing. Every screening the item answers for, this one included, is
    # in `queue_item_screenings`.
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    pair_id: Mapped[int | None] = mapped_column(ForeignKey("pairs.id"), index=True)
    # One pair, one question: the pair's id while the item is not resolved, else NULL. Unique,
    # so a pair has at most one unresolved item (NULLs never collide); a new screening of the
    # pair that needs a person joins that item instead. Items queued before migration 0009
    # beside an older unresolved item of the same pair keep NULL here.
    open_pair_id: Mapped[int | None] = mapped_column(unique=True)
    # Sampled at FAITHSCREEN_REVIEW_DOUBLE_RATE: two different people must decide.
    double_review: Mapped[bool] = mapped_column(default=False, server_default=false())
    status: Mapped[QueueStatus] = mapped_column(
        StrEnumType(QueueStatus, 16), default=QueueStatus.OPEN
    )
    # The screening's reasons, copied so the queue can be filtered without a join.
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    # A random sample of a passed or flagged outcome, not a needs_review.
    audit: Mapped[bool] = mapped_column(default=False)
    batch_id: Mapped[str | None] = mapped_column(String(36), ForeignKey("batches.id"), index=True)
    # The claimant's key name.
    claimed_by: Mapped[str | None] = mapped_column(String(100))
    claim_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When the current claim began (a decision records it, for seconds spent per item).
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    # Loaded only when asked for (lazy="raise"): async sessions cannot lazy-load.
    screening: Mapped[Screening] = relationship(lazy="raise")


class QueueItemScreening(Base):
    """A screening a queue item answers for: its decision applies to each."""

    __tablename__ = "queue_item_screenings"

    id: Mapped[int] = mapped_column(primary_key=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"), index=True)
    # A screening waits on at most one item.
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
