"""api_keys: who may call the API, with which access role. The key itself is never stored."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import CheckConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import StrEnumType, UTCDateTime
from app.models.base import Base, one_of


class AccessRole(StrEnum):
    """What a key may do. Each role of the chain may do everything the roles before it may;
    `metrics` stands apart: it may read /metrics and nothing else (and admins may too).

    Defined beside the column it constrains, below app/auth (which checks it), so that the
    table does not import the package that reads it. "Access role" keeps the word apart from
    `app.vocabulary.Role` (translator, judge): the API and the CLI say `role` for it."""

    SUBMITTER = "submitter"  # submit and read screenings and batches
    REVIEWER = "reviewer"  # plus the review queue and its decisions
    ADMIN = "admin"  # plus keys, reopening decisions, releasing others' claims
    METRICS = "metrics"  # a Prometheus scraper: /metrics only

    def allows(self, needed: AccessRole) -> bool:
        if AccessRole.METRICS in (self, needed):
            return self is needed or self is AccessRole.ADMIN
        return CHAIN.index(self) >= CHAIN.index(needed)


# The roles that include one another, lowest first.
CHAIN = (AccessRole.SUBMITTER, AccessRole.REVIEWER, AccessRole.ADMIN)

ROLES = tuple(role.value for role in AccessRole)


class ApiKey(Base):
    __tablename__ = "api_keys"
    __table_args__ = (CheckConstraint(one_of("role", ROLES), name="role"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # Unique for ever, revoked keys included: decisions name their actor by it.
    name: Mapped[str] = mapped_column(String(100), unique=True)
    role: Mapped[AccessRole] = mapped_column(StrEnumType(AccessRole, 16))
    # SHA-256 hex of the key; a fast hash suffices for 256 random bits (see app/auth/keys.py).
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The key's first characters, to tell keys apart in lists.
    key_prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Refreshed at most once a minute per key (see repositories/api_keys.py).
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
