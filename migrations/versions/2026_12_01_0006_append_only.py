# Append-only records refuse, in the database itself, every way of rewriting them: DELETE of
# a review (only UPDATE was refused), SQLite's INSERT OR REPLACE over a stored row, and
# PostgreSQL's TRUNCATE.
"""append only

Revision ID: 0006_append_only
Revises: 0005_labels
Create Date: 2026-12-01 00:06:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006_append_only"
down_revision: str | Sequence[str] | None = "0005_labels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

APPEND_ONLY = ("reviews", "decisions", "readings", "rulings")
# Besides its id, a table's unique keys that an INSERT OR REPLACE could replace a row by.
UNIQUE_KEYS = {"reviews": ("screening_id", "role", "attempt")}

# SQLite: INSERT OR REPLACE deletes the stored row without firing DELETE triggers (unless a
# connection turns recursive_triggers on), so a new row is checked before it goes in. Over
# a stored id it aborts; over a stored unique key it is dropped (RAISE(IGNORE)), which
# leaves the stored row as it was and is what ON CONFLICT DO NOTHING does anyway (the
# application's plain bulk insert counts the rows it stored and refuses a shortfall).
SQLITE_DELETE_TRIGGER = """
CREATE TRIGGER reviews_append_only_delete BEFORE DELETE ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only');
END
"""
SQLITE_REPLACE_TRIGGER = """
CREATE TRIGGER {table}_append_only_replace BEFORE INSERT ON {table}
BEGIN
    SELECT RAISE(ABORT, '{table} are append-only: a stored row is never replaced')
    WHERE EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id);{by_key}
END
"""
SQLITE_KEEP_BY_KEY = """
    SELECT RAISE(IGNORE) WHERE EXISTS (SELECT 1 FROM {table} WHERE {match});"""
POSTGRES_DELETE_TRIGGER = """
CREATE TRIGGER reviews_append_only_delete BEFORE DELETE ON reviews
FOR EACH ROW EXECUTE FUNCTION reviews_refuse_update()
"""
POSTGRES_TRUNCATE_FUNCTION = """
CREATE FUNCTION append_only_refuse_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only: TRUNCATE is refused', TG_TABLE_NAME;
END
$$
"""
POSTGRES_TRUNCATE_TRIGGER = """
CREATE TRIGGER {table}_append_only_truncate BEFORE TRUNCATE ON {table}
FOR EACH STATEMENT EXECUTE FUNCTION append_only_refuse_truncate()
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_DELETE_TRIGGER)
        op.execute(POSTGRES_TRUNCATE_FUNCTION)
        for table in APPEND_ONLY:
            op.execute(POSTGRES_TRUNCATE_TRIGGER.format(table=table))
        return
    op.execute(SQLITE_DELETE_TRIGGER)
    for table in APPEND_ONLY:
        op.execute(SQLITE_REPLACE_TRIGGER.format(table=table, by_key=_keep_by_key(table)))


def _keep_by_key(table: str) -> str:
    key = UNIQUE_KEYS.get(table)
    if key is None:
        return ""
    match = " AND ".join(f"{column} = NEW.{column}" for column in key)
    return SQLITE_KEEP_BY_KEY.format(table=table, match=match)


def downgrade() -> None:
    op.execute("DROP TRIGGER reviews_append_only_delete" + _on("reviews"))
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER {table}_append_only_truncate ON {table}")
        op.execute("DROP FUNCTION append_only_refuse_truncate()")
        return
    for table in APPEND_ONLY:
        op.execute(f"DROP TRIGGER {table}_append_only_replace")


def _on(table: str) -> str:
    return f" ON {table}" if op.get_bind().dialect.name == "postgresql" else ""
