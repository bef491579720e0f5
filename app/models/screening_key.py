"""screening_keys: the Idempotency-Key of a single screening (POST /v1/screenings), held for
FAITHSCREEN_SCREENING_IDEMPOTENCY_SECONDS, per API key. A batch keeps its key on its own row
(batches), per API key too."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import UTCDateTime
from app.models.base import Base


class ScreeningKey(Base):
    __tablename__ = "screening_keys"

    # Whose key it is: the API key's name (app.auth.Principal.name; "anonymous" with auth
    # off). Two keys (two pipelines) may send the same Idempotency-Key without meeting.
    scope: Mapped[str] = mapped_column(String(100), primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(255), primary_key=True)
    # No foreign key: the key is stored first, in the transaction that then stores this
    # screening, so a request that loses the race for a key has stored nothing.
    screening_id: Mapped[str] = mapped_column(String(36))
    # sha256 of the request body, to tell a true repeat from a key reused for another body.
    body_sha256: Mapped[str] = mapped_column(String(64))
    # When the key was taken: a repeat after the window makes a new screening. Indexed:
    # each keyed submission removes a few keys past their window, oldest first.
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)
