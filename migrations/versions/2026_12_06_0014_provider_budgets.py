# PLACEHOLDER (filled in by its owner in this session): provider budgets shared by every process (issue 33).
"""provider_budgets

Revision ID: 0014_provider_budgets
Revises: 0013_reply_format
Create Date: 2026-12-06 00:14:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0014_provider_budgets"
down_revision: str | Sequence[str] | None = "0013_reply_format"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
