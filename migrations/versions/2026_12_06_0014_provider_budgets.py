# Provider budgets move into the database so every process shares one: a row each, a lease per call.
"""provider_budgets

Revision ID: 0014_provider_budgets
Revises: 0013_reply_format
Create Date: 2026-12-06 00:14:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_provider_budgets"
down_revision: str | Sequence[str] | None = "0013_reply_format"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "provider_budgets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("base_url", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("next_request_at", UTC_DATETIME, nullable=False),
        sa.Column("next_token_at", UTC_DATETIME, nullable=False),
        sa.Column("paused_until", UTC_DATETIME, nullable=True),
        sa.Column("updated_at", UTC_DATETIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_budgets")),
        sa.UniqueConstraint("base_url", "model", name=op.f("uq_provider_budgets_base_url_model")),
    )
    op.create_table(
        "provider_budget_leases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("budget_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(), nullable=False),
        sa.Column("expires_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["budget_id"],
            ["provider_budgets.id"],
            name=op.f("fk_provider_budget_leases_budget_id_provider_budgets"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_provider_budget_leases")),
    )
    op.create_index(
        "ix_provider_budget_leases_budget_id_expires_at",
        "provider_budget_leases",
        ["budget_id", "expires_at"],
    )


def downgrade() -> None:
    op.drop_index(
        "ix_provider_budget_leases_budget_id_expires_at", table_name="provider_budget_leases"
    )
    op.drop_table("provider_budget_leases")
    op.drop_table("provider_budgets")
