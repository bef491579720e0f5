# PLACEHOLDER (filled in by its owner in this session): retention: pruning old prompts while raw replies stay (issue 33).
"""retention

Revision ID: 0018_retention
Revises: 0017_review_threads
Create Date: 2026-12-06 00:18:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0018_retention"
down_revision: str | Sequence[str] | None = "0017_review_threads"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
