"""batches: many screenings submitted in one request and followed together."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy import Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import UTCDateTime
from app.models.base import Base


def new_batch_id() -> str:
    return str(uuid.uuid4())


class Batch(Base):
    """The batch itself; its items are the screenings whose `batch_id` names it.

    Progress (done, outcomes, status) is never stored here: it is counted from the
    screenings, so there is no second copy of the truth to keep in step.
    """

    __tablename__ = "batches"
    __table_args__ = (
        # Listing is newest first with a (created_at, id) keyset cursor.
        Index("ix_batches_created_at_id", "created_at", "id"),
        UniqueConstraint("idempotency_scope", "idempotency_key"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_batch_id)
    name: Mapped[str | None] = mapped_column(String(200))
    total: Mapped[int]
    # The client's Idempotency-Key: a repeat with the same key, from the same API key,
    # finds this batch. The scope is that API key's name (app.auth.Principal.name;
    # "anonymous" with auth off), set with the key.
    idempotency_scope: Mapped[str | None] = mapped_column(String(100))
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    # sha256 of the request body, to tell a true repeat from a key reused for another body.
    body_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
