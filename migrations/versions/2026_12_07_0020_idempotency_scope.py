# Placeholder reserved so parallel work keeps one head; filled in by its own change.
"""idempotency keys scoped per API key

Revision ID: 0020_idempotency_scope
Revises: 0019_lean_reader
Create Date: 2026-12-07 00:20:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0020_idempotency_scope"
down_revision: str | Sequence[str] | None = "0019_lean_reader"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
