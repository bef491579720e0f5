# Time per item runs from a reviewer's first opening, not the claim; items gain comments, assignees.
"""review_threads

Revision ID: 0017_review_threads
Revises: 0016_lean_checks
Create Date: 2026-12-06 00:17:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_review_threads"
down_revision: str | Sequence[str] | None = "0016_lean_checks"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)
APPEND_ONLY = ("comments", "assignments")

# As decisions (0003, 0006): no UPDATE, no DELETE, no INSERT OR REPLACE over a stored id on
# SQLite, no TRUNCATE on PostgreSQL.
SQLITE_TRIGGER = """
CREATE TRIGGER {table}_append_only_{name} BEFORE {event} ON {table}
BEGIN
    SELECT RAISE(ABORT, '{table} are append-only');
END
"""
SQLITE_REPLACE_TRIGGER = """
CREATE TRIGGER {table}_append_only_replace BEFORE INSERT ON {table}
BEGIN
    SELECT RAISE(ABORT, '{table} are append-only: a stored row is never replaced')
    WHERE EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id);
END
"""
POSTGRES_FUNCTION = """
CREATE FUNCTION thread_rows_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only (row %)', TG_TABLE_NAME, OLD.id;
END
$$
"""
POSTGRES_TRIGGER = """
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
FOR EACH ROW EXECUTE FUNCTION thread_rows_refuse_change()
"""
# append_only_refuse_truncate() is 0006's.
POSTGRES_TRUNCATE_TRIGGER = """
CREATE TRIGGER {table}_append_only_truncate BEFORE TRUNCATE ON {table}
FOR EACH STATEMENT EXECUTE FUNCTION append_only_refuse_truncate()
"""


def upgrade() -> None:
    # A plain ADD COLUMN, not a batch: SQLite's batch mode would rebuild `decisions` and
    # drop its append-only triggers; a nullable column rewrites no stored row.
    op.add_column("decisions", sa.Column("opened_at", UTC_DATETIME, nullable=True))
    create_item_openings()
    create_comments()
    create_assignments()
    create_triggers()


def create_item_openings() -> None:
    op.create_table(
        "item_openings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("queue_item_id", sa.Integer(), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("opened_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_item_openings_queue_item_id_queue_items"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_item_openings")),
        sa.UniqueConstraint(
            "queue_item_id", "actor", name=op.f("uq_item_openings_queue_item_id_actor")
        ),
    )


def create_comments() -> None:
    op.create_table(
        "comments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("queue_item_id", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_comments_queue_item_id_queue_items"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comments")),
    )
    op.create_index(op.f("ix_comments_queue_item_id"), "comments", ["queue_item_id"])


def create_assignments() -> None:
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("queue_item_id", sa.Integer(), nullable=False),
        sa.Column("assignee", sa.String(length=100), nullable=True),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("actor_role", sa.String(length=16), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_assignments_queue_item_id_queue_items"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignments")),
    )
    op.create_index("ix_assignments_queue_item_id_id", "assignments", ["queue_item_id", "id"])
    op.create_index("ix_assignments_assignee", "assignments", ["assignee"])


def create_triggers() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_FUNCTION)
        for table in APPEND_ONLY:
            op.execute(POSTGRES_TRIGGER.format(table=table))
            op.execute(POSTGRES_TRUNCATE_TRIGGER.format(table=table))
        return
    for table in APPEND_ONLY:
        for event in ("UPDATE", "DELETE"):
            op.execute(SQLITE_TRIGGER.format(table=table, event=event, name=event.lower()))
        op.execute(SQLITE_REPLACE_TRIGGER.format(table=table))


def downgrade() -> None:
    # Dropping the tables drops their triggers on both databases.
    op.drop_table("assignments")
    op.drop_table("comments")
    op.drop_table("item_openings")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION thread_rows_refuse_change()")
    op.drop_column("decisions", "opened_at")
