# Interactive work is claimed first and keys take turns; keys get caps; singles an Idempotency-Key.
"""queue_priorities

Revision ID: 0015_queue_priorities
Revises: 0014_provider_budgets
Create Date: 2026-12-06 00:15:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_queue_priorities"
down_revision: str | Sequence[str] | None = "0014_provider_budgets"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

QUEUED_ONLY = sa.text("status = 'queued'")
LIVE_ONLY = sa.text("status IN ('queued', 'running')")
# What was stored before is classed as it would be now: a batch's items are batch work.
SCREENINGS_BACKFILL = "UPDATE screenings SET priority = 'batch' WHERE batch_id IS NOT NULL"
JOBS_BACKFILL = (
    "UPDATE jobs SET priority_rank = 1 WHERE screening_id IN "
    "(SELECT id FROM screenings WHERE batch_id IS NOT NULL)"
)


def upgrade() -> None:
    # screenings has no trigger for SQLite's batch mode to drop (0006 guards reviews,
    # decisions, readings and rulings), so its CHECK is added as 0010 added panel_rule's.
    with op.batch_alter_table("screenings") as batch:
        batch.add_column(
            sa.Column(
                "priority", sa.String(length=16), nullable=False, server_default="interactive"
            )
        )
        batch.create_check_constraint(
            op.f("ck_screenings_priority"), "priority IN ('interactive', 'batch')"
        )
    # Plain ADD COLUMNs with constant defaults: no table rebuild on either database.
    op.add_column(
        "jobs", sa.Column("priority_rank", sa.SmallInteger(), nullable=False, server_default="0")
    )
    op.add_column("jobs", sa.Column("turn", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("jobs", sa.Column("submitter", sa.String(length=100), nullable=True))
    op.execute(SCREENINGS_BACKFILL)
    op.execute(JOBS_BACKFILL)
    _create_partial_index(
        "ix_jobs_queued_claim_order", ["status", "priority_rank", "turn", "id"], QUEUED_ONLY
    )
    _create_partial_index(
        "ix_jobs_live_submitter", ["submitter", "priority_rank", "turn"], LIVE_ONLY
    )
    op.create_table(
        "screening_keys",
        sa.Column("idempotency_key", sa.String(length=255), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("body_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("idempotency_key", name=op.f("pk_screening_keys")),
    )
    op.create_index(
        op.f("ix_screening_keys_created_at"), "screening_keys", ["created_at"], unique=False
    )


def _create_partial_index(name: str, columns: list[str], where: sa.TextClause) -> None:
    op.create_index(name, "jobs", columns, postgresql_where=where, sqlite_where=where)


def downgrade() -> None:
    op.drop_index(op.f("ix_screening_keys_created_at"), table_name="screening_keys")
    op.drop_table("screening_keys")
    op.drop_index("ix_jobs_live_submitter", table_name="jobs")
    op.drop_index("ix_jobs_queued_claim_order", table_name="jobs")
    op.drop_column("jobs", "submitter")
    op.drop_column("jobs", "turn")
    op.drop_column("jobs", "priority_rank")
    with op.batch_alter_table("screenings") as batch:
        batch.drop_constraint(op.f("ck_screenings_priority"), type_="check")
        batch.drop_column("priority")
