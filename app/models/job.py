"""jobs: the work queue, one job per queued screening, held by a worker through a lease."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import JobStatus

STATUSES = tuple(s.value for s in JobStatus)


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        # Claiming looks for queued jobs due to run (and running ones with lapsed leases).
        Index("ix_jobs_status_run_after", "status", "run_after"),
        CheckConstraint(one_of("status", STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    status: Mapped[JobStatus] = mapped_column(StrEnumType(JobStatus, 16), default=JobStatus.QUEUED)
    # Claims so far; a release (shutdown, provider backoff) gives its claim back.
    attempts: Mapped[int] = mapped_column(default=0)
    run_after: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_owner: Mapped[str | None] = mapped_column(String)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # An error's text may quote what a provider sent (U+0000...): stored whatever it holds.
    last_error: Mapped[str | None] = mapped_column(ProviderText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
