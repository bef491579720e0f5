# PLACEHOLDER (filled in by its owner in this session): Lean elaboration results stored like reviews (issue 34).
"""lean_checks

Revision ID: 0016_lean_checks
Revises: 0015_queue_priorities
Create Date: 2026-12-06 00:16:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0016_lean_checks"
down_revision: str | Sequence[str] | None = "0015_queue_priorities"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
