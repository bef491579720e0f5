# Placeholder reserved so parallel work keeps one head; filled in by its own change.
"""lean reader version

Revision ID: 0019_lean_reader
Revises: 0018_retention
Create Date: 2026-12-07 00:19:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0019_lean_reader"
down_revision: str | Sequence[str] | None = "0018_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
