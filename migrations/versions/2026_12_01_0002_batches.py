# Batches (issue 4): a batches table, and each screening's batch and position in it.
"""batches

Revision ID: 0002_batches
Revises: 0001_initial
Create Date: 2026-12-01 00:02:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_batches"
down_revision: str | Sequence[str] | None = "0001_initial"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UNIQUE_POSITION = "uq_screenings_batch_id_batch_index"
BATCH_FOREIGN_KEY = "fk_screenings_batch_id_batches"


def upgrade() -> None:
    op.create_table(
        "batches",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=255), nullable=True),
        sa.Column("body_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_batches")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_batches_idempotency_key")),
    )
    op.create_index("ix_batches_created_at_id", "batches", ["created_at", "id"])
    # On SQLite, batch mode rebuilds `screenings` (it cannot add a foreign key in place);
    # no trigger lives on that table, so nothing is lost in the copy.
    with op.batch_alter_table("screenings") as batch:
        batch.add_column(sa.Column("batch_index", sa.Integer(), nullable=True))
        batch.create_unique_constraint(op.f(UNIQUE_POSITION), ["batch_id", "batch_index"])
        batch.create_foreign_key(op.f(BATCH_FOREIGN_KEY), "batches", ["batch_id"], ["id"])


def downgrade() -> None:
    with op.batch_alter_table("screenings") as batch:
        batch.drop_constraint(op.f(BATCH_FOREIGN_KEY), type_="foreignkey")
        batch.drop_constraint(op.f(UNIQUE_POSITION), type_="unique")
        batch.drop_column("batch_index")
    op.drop_index("ix_batches_created_at_id", table_name="batches")
    op.drop_table("batches")
