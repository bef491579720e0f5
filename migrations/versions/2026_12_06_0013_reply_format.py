# Reviews record the reply format asked: a re-score reads a tool or JSON reply by its reader.
"""reply_format

Revision ID: 0013_reply_format
Revises: 0012_evidential
Create Date: 2026-12-06 00:13:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_reply_format"
down_revision: str | Sequence[str] | None = "0012_evidential"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every review stored before was asked as text and read by the contract parser, whose
    # version each row already holds in parser_version (a grammar review's reply was read
    # exactly so: it is `text` here, with no grammar version). Plain ADD COLUMNs with a
    # constant default or none, not a batch: SQLite's batch mode would rebuild `reviews`
    # and drop its append-only triggers, and no stored row is rewritten.
    op.add_column(
        "reviews",
        sa.Column("reply_format", sa.String(16), nullable=False, server_default="text"),
    )
    op.add_column("reviews", sa.Column("grammar_version", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("reviews", "grammar_version")
    op.drop_column("reviews", "reply_format")
