"""jobs: the work queue, one job per queued screening, held by a worker through a lease.

Claims take jobs in (priority_rank, turn, id) order: interactive before batch, and within a
priority one job of each submitting key in turn (app/repositories/jobs.py explains `turn`).
The partial indexes hold live jobs only, so they stay the size of the queue, not of history.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, ForeignKey, Index, SmallInteger, String, text
from sqlalchemy.orm import Mapped, mapped_column

from app.clock import utcnow
from app.db.types import ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import JobStatus

STATUSES = tuple(s.value for s in JobStatus)
QUEUED_ONLY = text("status = 'queued'")
LIVE_ONLY = text("status IN ('queued', 'running')")


class Job(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        # Claiming looks for queued jobs due to run (and running ones with lapsed leases).
        Index("ix_jobs_status_run_after", "status", "run_after"),
        # The claim's order over queued jobs (and the round's front, the lowest turn).
        # `status` leads although the predicate fixes it: SQLite then takes this index for
        # the claim's `status = 'queued'` (not ix_jobs_status_run_after and a sort).
        Index(
            "ix_jobs_queued_claim_order",
            "status",
            "priority_rank",
            "turn",
            "id",
            postgresql_where=QUEUED_ONLY,
            sqlite_where=QUEUED_ONLY,
        ),
        # A key's live jobs: its outstanding count (the caps) and its last turn.
        Index(
            "ix_jobs_live_submitter",
            "submitter",
            "priority_rank",
            "turn",
            postgresql_where=LIVE_ONLY,
            sqlite_where=LIVE_ONLY,
        ),
        CheckConstraint(one_of("status", STATUSES), name="status"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), unique=True)
    status: Mapped[JobStatus] = mapped_column(StrEnumType(JobStatus, 16), default=JobStatus.QUEUED)
    # Claims so far; a release (shutdown, provider backoff) gives its claim back.
    attempts: Mapped[int] = mapped_column(default=0)
    # 0 interactive, 1 batch (app.vocabulary.Priority, as a number so the index orders it).
    priority_rank: Mapped[int] = mapped_column(SmallInteger, default=0, server_default="0")
    # The job's round in its key's turn-taking (see app/repositories/jobs.py).
    turn: Mapped[int] = mapped_column(default=0, server_default="0")
    # The name of the key that submitted it (app.auth.Principal.name); None before 0015.
    submitter: Mapped[str | None] = mapped_column(String(100))
    run_after: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_owner: Mapped[str | None] = mapped_column(String)
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # An error's text may quote what a provider sent (U+0000...): stored whatever it holds.
    last_error: Mapped[str | None] = mapped_column(ProviderText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
