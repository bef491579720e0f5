"""api_keys: who may call the API, with which access role. The key itself is never stored."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from app.auth.principal import ACCESS_ROLES
from app.db.types import UTCDateTime, utcnow
from app.models.base import Base, one_of

ROLES = tuple(role.value for role in ACCESS_ROLES)


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (CheckConstraint(one_of("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # Unique for ever, revoked keys included: decisions name their actor by it.
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    # SHA-256 hex of the key; a fast hash suffices for 256 random bits (see app/auth/keys.py).
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The key's first characters, to tell keys apart in lists.
    key_prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Refreshed at most once a minute per key (see repositories/api_keys.py).
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
