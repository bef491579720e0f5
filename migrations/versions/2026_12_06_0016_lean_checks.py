# Lean checks are stored like reviews (issue 34): one append-only row per screening, raw body kept.
"""lean_checks

Revision ID: 0016_lean_checks
Revises: 0015_queue_priorities
Create Date: 2026-12-06 00:16:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_lean_checks"
down_revision: str | Sequence[str] | None = "0015_queue_priorities"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LEAN_STATUSES = ("ok", "error", "timeout", "unavailable")

# Append-only as reviews are (0001, 0006): no UPDATE, no DELETE, no SQLite INSERT OR
# REPLACE over a stored row, no PostgreSQL TRUNCATE (its function is 0006's).
SQLITE_TRIGGERS = (
    """
CREATE TRIGGER lean_checks_append_only BEFORE UPDATE ON lean_checks
BEGIN
    SELECT RAISE(ABORT, 'lean_checks are append-only');
END
""",
    """
CREATE TRIGGER lean_checks_append_only_delete BEFORE DELETE ON lean_checks
BEGIN
    SELECT RAISE(ABORT, 'lean_checks are append-only');
END
""",
    """
CREATE TRIGGER lean_checks_append_only_replace BEFORE INSERT ON lean_checks
BEGIN
    SELECT RAISE(ABORT, 'lean_checks are append-only: a stored row is never replaced')
    WHERE EXISTS (SELECT 1 FROM lean_checks WHERE id = NEW.id);
    SELECT RAISE(IGNORE)
    WHERE EXISTS (SELECT 1 FROM lean_checks WHERE screening_id = NEW.screening_id);
END
""",
)
POSTGRES_FUNCTION = """
CREATE FUNCTION lean_checks_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'lean_checks are append-only (row %)', OLD.id;
END
$$
"""
POSTGRES_TRIGGERS = (
    """
CREATE TRIGGER lean_checks_append_only BEFORE UPDATE OR DELETE ON lean_checks
FOR EACH ROW EXECUTE FUNCTION lean_checks_refuse_change()
""",
    """
CREATE TRIGGER lean_checks_append_only_truncate BEFORE TRUNCATE ON lean_checks
FOR EACH STATEMENT EXECUTE FUNCTION append_only_refuse_truncate()
""",
)


def upgrade() -> None:
    statuses = ", ".join(f"'{status}'" for status in LEAN_STATUSES)
    op.create_table(
        "lean_checks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("server_url", sa.String(length=2048), nullable=False),
        sa.Column("server_version", sa.String(length=64), nullable=True),
        sa.Column("snippet_id", sa.String(length=64), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("timeout_seconds", sa.Integer(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("raw_body", sa.Text(), nullable=True),
        sa.Column("failure", sa.String(length=32), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.Column("goal", sa.Text(), nullable=True),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(f"status IN ({statuses})", name=op.f("ck_lean_checks_status")),
        sa.ForeignKeyConstraint(
            ["screening_id"],
            ["screenings.id"],
            name=op.f("fk_lean_checks_screening_id_screenings"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lean_checks")),
        sa.UniqueConstraint("screening_id", name=op.f("uq_lean_checks_screening_id")),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_FUNCTION)
        for trigger in POSTGRES_TRIGGERS:
            op.execute(trigger)
        return
    for trigger in SQLITE_TRIGGERS:
        op.execute(trigger)


def downgrade() -> None:
    # Dropping the table drops its triggers; PostgreSQL's function is ours alone.
    op.drop_table("lean_checks")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION lean_checks_refuse_change()")
