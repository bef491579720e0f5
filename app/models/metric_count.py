"""metric_counts and metric_count_changes: what /metrics reports as totals over all history
(reviews by role, model and parse status, their latency and tokens; screenings, jobs and
queue items by status), kept at write time so a scrape reads a few rows, not history.

Database triggers (migration 0018_retention) append one change row per review stored and
per status a screening, job or queue item enters or leaves: inserting, never updating a
shared row, so concurrent writers never wait on each other or deadlock over a counter.
`repositories.metric_counts.fold` moves the changes into the totals (a scrape and the
worker do), and a scrape reads totals plus whatever changes are not folded yet.

One row shape for every family; the labels by family:
  reviews      (role, judge_name, model label, parse_status), bucket = latency bucket
  screenings   (outcome or "none", status)
  jobs         (status)
  queue_items  (status)
"""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, PrimaryKeyConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.base import Base

# SQLite autoincrements only an INTEGER PRIMARY KEY; PostgreSQL needs 64 bits for a row
# per write for years.
ChangeId = BigInteger().with_variant(Integer(), "sqlite")


class _Counted:
    family: Mapped[str] = mapped_column(String(16))
    label1: Mapped[str] = mapped_column(String(256))
    label2: Mapped[str] = mapped_column(String(256))
    label3: Mapped[str] = mapped_column(String(256))
    label4: Mapped[str] = mapped_column(String(256))
    # Reviews: the index of the first latency bound at or above the call's latency
    # (len(bounds) past the last, -1 with no latency); -1 in the other families.
    bucket: Mapped[int]
    n: Mapped[int] = mapped_column(BigInteger)
    latency_ms: Mapped[int] = mapped_column(BigInteger)
    prompt_tokens: Mapped[int] = mapped_column(BigInteger)
    completion_tokens: Mapped[int] = mapped_column(BigInteger)
    reasoning_tokens: Mapped[int] = mapped_column(BigInteger)


class MetricCount(_Counted, Base):
    __tablename__ = "metric_counts"
    __table_args__ = (
        PrimaryKeyConstraint("family", "label1", "label2", "label3", "label4", "bucket"),
    )


class MetricCountChange(_Counted, Base):
    __tablename__ = "metric_count_changes"

    id: Mapped[int] = mapped_column(ChangeId, primary_key=True, autoincrement=True)
