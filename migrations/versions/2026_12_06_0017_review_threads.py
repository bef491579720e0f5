# PLACEHOLDER (filled in by its owner in this session): review queue assignment, comments and opening times (issue 35).
"""review_threads

Revision ID: 0017_review_threads
Revises: 0016_lean_checks
Create Date: 2026-12-06 00:17:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0017_review_threads"
down_revision: str | Sequence[str] | None = "0016_lean_checks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
