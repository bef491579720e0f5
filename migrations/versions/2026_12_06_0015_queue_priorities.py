# PLACEHOLDER (filled in by its owner in this session): screening priorities, fair claims, per-key caps, idempotent singles (issue 33).
"""queue_priorities

Revision ID: 0015_queue_priorities
Revises: 0014_provider_budgets
Create Date: 2026-12-06 00:15:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0015_queue_priorities"
down_revision: str | Sequence[str] | None = "0014_provider_budgets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
