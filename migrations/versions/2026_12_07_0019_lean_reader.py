# A stored Lean check says which reader read its body (issue 34 follow-up): lean-1 before, lean-2 stricter.
"""lean reader version

Revision ID: 0019_lean_reader
Revises: 0018_retention
Create Date: 2026-12-07 00:19:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_lean_reader"
down_revision: str | Sequence[str] | None = "0018_retention"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Every row stored before this revision was read by the first reader, unversioned until
# now and named `lean-1` here (app/lean/body.py's LEAN_READER_VERSION then).
FIRST_READER = "lean-1"
BACKFILL = f"UPDATE lean_checks SET reader_version = '{FIRST_READER}'"

# lean_checks refuse every UPDATE (0016): the backfill alone runs with the refusal lifted,
# inside this migration's transaction, and the same trigger is put back before it ends.
SQLITE_UPDATE_TRIGGER = """
CREATE TRIGGER lean_checks_append_only BEFORE UPDATE ON lean_checks
BEGIN
    SELECT RAISE(ABORT, 'lean_checks are append-only');
END
"""


def upgrade() -> None:
    op.add_column("lean_checks", sa.Column("reader_version", sa.String(length=16), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE lean_checks DISABLE TRIGGER lean_checks_append_only")
        op.execute(BACKFILL)
        op.execute("ALTER TABLE lean_checks ENABLE TRIGGER lean_checks_append_only")
        return
    op.execute("DROP TRIGGER lean_checks_append_only")
    op.execute(BACKFILL)
    op.execute(SQLITE_UPDATE_TRIGGER)


def downgrade() -> None:
    # SQLite (3.35+) drops a column in place; no trigger of lean_checks names this one.
    op.drop_column("lean_checks", "reader_version")
