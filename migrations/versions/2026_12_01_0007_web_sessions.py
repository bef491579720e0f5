# Review-page sign-ins become server-side sessions: the cookie holds a random token whose
# hash is stored here, never the API key, and signing out deletes the row.
"""web sessions

Revision ID: 0007_web_sessions
Revises: 0006_append_only
Create Date: 2026-12-01 00:07:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_web_sessions"
down_revision: str | Sequence[str] | None = "0006_append_only"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "web_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("api_key_id", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.Column("expires_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"], ["api_keys.id"], name=op.f("fk_web_sessions_api_key_id_api_keys")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_web_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_web_sessions_token_hash")),
    )
    op.create_index(op.f("ix_web_sessions_api_key_id"), "web_sessions", ["api_key_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_web_sessions_api_key_id"), table_name="web_sessions")
    op.drop_table("web_sessions")
