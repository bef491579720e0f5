# Re-scoring (issue 6): applied runs, readings under new parser versions, rulings under new
# versions, next to the reviews and outcomes they re-read (which stay as they are).
"""rescores

Revision ID: 0004_rescores
Revises: 0003_review_queue
Create Date: 2026-12-01 00:04:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_rescores"
down_revision: str | Sequence[str] | None = "0003_review_queue"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)
APPEND_ONLY = ("readings", "rulings")

# Readings and rulings are append-only like reviews: the ORM refuses changes, these
# triggers cover raw SQL. (A future batch-mode ALTER of either on SQLite recreates the
# table and drops them: recreate them then.)
SQLITE_TRIGGER = """
CREATE TRIGGER {table}_append_only_{event} BEFORE {event} ON {table}
BEGIN
    SELECT RAISE(ABORT, '{table} are append-only');
END
"""
POSTGRES_FUNCTION = """
CREATE FUNCTION rescore_rows_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only (row %)', TG_TABLE_NAME, OLD.id;
END
$$
"""
POSTGRES_TRIGGER = """
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
FOR EACH ROW EXECUTE FUNCTION rescore_rows_refuse_change()
"""


def upgrade() -> None:
    op.create_table(
        "rescores",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("scope", sa.JSON(), nullable=False),
        sa.Column("parser_version", sa.String(length=64), nullable=False),
        sa.Column("policy_version", sa.String(length=64), nullable=False),
        sa.Column("evidence_version", sa.String(length=64), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rescores")),
    )
    create_readings()
    create_rulings()
    create_triggers()


def create_readings() -> None:
    op.create_table(
        "readings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("review_id", sa.Integer(), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("rescore_id", sa.String(length=36), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("parse_status", sa.String(length=32), nullable=False),
        sa.Column("back_translation", sa.Text(), nullable=True),
        sa.Column("issues", sa.Text(), nullable=True),
        sa.Column("parser_version", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["rescore_id"], ["rescores.id"], name=op.f("fk_readings_rescore_id_rescores")
        ),
        sa.ForeignKeyConstraint(
            ["review_id"], ["reviews.id"], name=op.f("fk_readings_review_id_reviews")
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"], ["screenings.id"], name=op.f("fk_readings_screening_id_screenings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_readings")),
    )
    op.create_index(op.f("ix_readings_rescore_id"), "readings", ["rescore_id"])
    op.create_index(op.f("ix_readings_review_id"), "readings", ["review_id"])
    op.create_index(op.f("ix_readings_screening_id"), "readings", ["screening_id"])


def create_rulings() -> None:
    op.create_table(
        "rulings",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("rescore_id", sa.String(length=36), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("parser_version", sa.String(length=200), nullable=False),
        sa.Column("policy_version", sa.String(length=64), nullable=False),
        sa.Column("evidence_version", sa.String(length=64), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.CheckConstraint(
            "outcome IN ('passed', 'flagged', 'needs_review')", name=op.f("ck_rulings_outcome")
        ),
        sa.ForeignKeyConstraint(
            ["rescore_id"], ["rescores.id"], name=op.f("fk_rulings_rescore_id_rescores")
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"], ["screenings.id"], name=op.f("fk_rulings_screening_id_screenings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rulings")),
    )
    op.create_index(op.f("ix_rulings_rescore_id"), "rulings", ["rescore_id"])
    op.create_index(op.f("ix_rulings_screening_id"), "rulings", ["screening_id"])


def create_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_FUNCTION)
        for table in APPEND_ONLY:
            op.execute(POSTGRES_TRIGGER.format(table=table))
    else:
        for table in APPEND_ONLY:
            for event in ("UPDATE", "DELETE"):
                op.execute(SQLITE_TRIGGER.format(table=table, event=event))


def downgrade() -> None:
    op.drop_table("rulings")
    op.drop_table("readings")
    op.drop_table("rescores")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION rescore_rows_refuse_change()")
