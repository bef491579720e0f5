"""pairs: each distinct (informal, formal, header) stored once, found by its content hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import UTCDateTime
from app.models.base import Base


class PairRow(Base):
    """A stored pair (`app.vocabulary.Pair` is the value; this is its row)."""

    __tablename__ = "pairs"

    id: Mapped[int] = mapped_column(primary_key=True)
    content_hash: Mapped[str] = mapped_column(String(64), unique=True)
    informal: Mapped[str] = mapped_column(Text)
    formal: Mapped[str] = mapped_column(Text)
    header: Mapped[str] = mapped_column(Text, default="")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
