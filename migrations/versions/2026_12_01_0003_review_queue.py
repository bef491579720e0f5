# Human review (issue 5): API keys, the review queue, append-only decisions, final_decision.
"""review queue

Revision ID: 0003_review_queue
Revises: 0002_batches
Create Date: 2026-12-01 00:03:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_review_queue"
down_revision: str | Sequence[str] | None = "0002_batches"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)

# Decisions are append-only, like reviews: the ORM refuses changes, these triggers cover
# raw SQL. Deletions are refused too: the trail keeps everything. (A future batch-mode
# ALTER of `decisions` on SQLite recreates the table and drops them: recreate them then.)
SQLITE_DECISIONS_TRIGGERS = [
    f"""
CREATE TRIGGER decisions_append_only_{event.lower()} BEFORE {event} ON decisions
BEGIN
    SELECT RAISE(ABORT, 'decisions are append-only');
END
"""
    for event in ("UPDATE", "DELETE")
]
POSTGRES_DECISIONS_FUNCTION = """
CREATE FUNCTION decisions_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'decisions are append-only (decision %)', OLD.id;
END
$$
"""
POSTGRES_DECISIONS_TRIGGER = """
CREATE TRIGGER decisions_append_only BEFORE UPDATE OR DELETE ON decisions
FOR EACH ROW EXECUTE FUNCTION decisions_refuse_change()
"""
FINAL_DECISION_CHECK = "ck_screenings_final_decision"


def upgrade() -> None:
    create_api_keys()
    create_queue_items()
    create_decisions()
    create_decisions_triggers()
    # SQLite cannot add a CHECK in place: batch mode rebuilds `screenings` (no trigger
    # lives on it, so nothing is lost in the copy).
    with op.batch_alter_table("screenings") as batch:
        batch.add_column(sa.Column("final_decision", sa.String(length=16), nullable=True))
        batch.add_column(sa.Column("final_decision_at", UTC_DATETIME, nullable=True))
        batch.create_check_constraint(
            op.f(FINAL_DECISION_CHECK),
            "final_decision IS NULL OR final_decision IN ('faithful', 'mismatch')",
        )


def create_api_keys() -> None:
    op.create_table(
        "api_keys",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("key_prefix", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.Column("revoked_at", UTC_DATETIME, nullable=True),
        sa.Column("last_used_at", UTC_DATETIME, nullable=True),
        sa.CheckConstraint(
            "role IN ('submitter', 'reviewer', 'admin')", name=op.f("ck_api_keys_role")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_api_keys")),
        sa.UniqueConstraint("key_hash", name=op.f("uq_api_keys_key_hash")),
        sa.UniqueConstraint("name", name=op.f("uq_api_keys_name")),
    )


def create_queue_items() -> None:
    op.create_table(
        "queue_items",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("audit", sa.Boolean(), nullable=False),
        sa.Column("batch_id", sa.String(length=36), nullable=True),
        sa.Column("claimed_by", sa.String(length=100), nullable=True),
        sa.Column("claim_expires_at", UTC_DATETIME, nullable=True),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.Column("updated_at", UTC_DATETIME, nullable=False),
        sa.Column("resolved_at", UTC_DATETIME, nullable=True),
        sa.CheckConstraint(
            "status IN ('open', 'claimed', 'resolved')", name=op.f("ck_queue_items_status")
        ),
        sa.ForeignKeyConstraint(
            ["batch_id"], ["batches.id"], name=op.f("fk_queue_items_batch_id_batches")
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"],
            ["screenings.id"],
            name=op.f("fk_queue_items_screening_id_screenings"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queue_items")),
        sa.UniqueConstraint("screening_id", name=op.f("uq_queue_items_screening_id")),
    )
    op.create_index(op.f("ix_queue_items_batch_id"), "queue_items", ["batch_id"])
    op.create_index("ix_queue_items_status_created_at", "queue_items", ["status", "created_at"])


def create_decisions() -> None:
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("queue_item_id", sa.Integer(), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("decision", sa.String(length=16), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.CheckConstraint("kind IN ('decision', 'reopen')", name=op.f("ck_decisions_kind")),
        sa.CheckConstraint(
            "decision IS NULL OR decision IN ('faithful', 'mismatch')",
            name=op.f("ck_decisions_decision"),
        ),
        sa.CheckConstraint(
            "(kind = 'decision' AND decision IS NOT NULL) OR (kind = 'reopen' AND decision IS NULL)",
            name=op.f("ck_decisions_value_matches_kind"),
        ),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_decisions_queue_item_id_queue_items"),
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"], ["screenings.id"], name=op.f("fk_decisions_screening_id_screenings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_decisions")),
    )
    op.create_index(op.f("ix_decisions_queue_item_id"), "decisions", ["queue_item_id"])
    op.create_index(op.f("ix_decisions_screening_id"), "decisions", ["screening_id"])


def create_decisions_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_DECISIONS_FUNCTION)
        op.execute(POSTGRES_DECISIONS_TRIGGER)
    else:
        for trigger in SQLITE_DECISIONS_TRIGGERS:
            op.execute(trigger)


def downgrade() -> None:
    with op.batch_alter_table("screenings") as batch:
        batch.drop_constraint(op.f(FINAL_DECISION_CHECK), type_="check")
        batch.drop_column("final_decision_at")
        batch.drop_column("final_decision")
    op.drop_table("decisions")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION decisions_refuse_change()")
    op.drop_table("queue_items")
    op.drop_table("api_keys")
