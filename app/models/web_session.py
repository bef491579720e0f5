"""web_sessions: who is signed in to the review pages. The browser holds a random token;
only its hash is stored, and never the API key it stands for."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import UTCDateTime
from app.models.base import Base


class WebSession(Base):
    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    # SHA-256 hex of the cookie's token: 256 random bits, so a fast hash suffices (as for
    # API keys), and a copy of the table signs nobody in.
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # Checked on every request (unrevoked), so revoking the key ends its sessions at once.
    api_key_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A fixed end (FAITHSCREEN_REVIEW_SESSION_SECONDS after sign-in), never extended.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
