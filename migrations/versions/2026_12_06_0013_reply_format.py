# PLACEHOLDER (filled in by its owner in this session): reply formats: each review records the format asked and the reader's version (issue 36).
"""reply_format

Revision ID: 0013_reply_format
Revises: 0012_evidential
Create Date: 2026-12-06 00:13:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0013_reply_format"
down_revision: str | Sequence[str] | None = "0012_evidential"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
