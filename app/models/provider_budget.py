"""provider_budgets: one row per provider (base URL + model) holding the budget every
process shares, and provider_budget_leases: its calls in flight, each until it expires.

The row is a token bucket in its "virtual scheduling" form (GCRA): instead of a count of
tokens it keeps the time at which the budget is next free, for requests and for tokens,
so a process can reserve a start time in one short transaction and then wait for it
without holding anything. Limits are not stored: each process applies its settings.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import UTCDateTime
from app.models.base import Base


class ProviderBudget(Base):
    __tablename__ = "provider_budgets"
    __table_args__ = (UniqueConstraint("base_url", "model"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    # Without user info or query (app/budgets/keys.py): no credential is stored here.
    base_url: Mapped[str] = mapped_column(String)
    model: Mapped[str] = mapped_column(String)
    # Requests per minute: the earliest start of the next request (spaced 60/rpm apart).
    next_request_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Tokens per minute: when the tokens granted so far are paid for at the budget's rate.
    next_token_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # A Retry-After from this provider, seen by any process: no call starts before it.
    paused_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class ProviderBudgetLease(Base):
    """One call in flight (or waiting for its reserved start). A process that dies leaves
    its leases behind; they stop counting at `expires_at` and are deleted then."""

    __tablename__ = "provider_budget_leases"
    __table_args__ = (
        Index("ix_provider_budget_leases_budget_id_expires_at", "budget_id", "expires_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    budget_id: Mapped[int] = mapped_column(ForeignKey("provider_budgets.id"))
    # The worker's owner name (host:pid:random), as on the jobs it leases.
    owner: Mapped[str] = mapped_column(String)
    # The reserved start plus one attempt's deadline and a margin: no attempt outlives it.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
