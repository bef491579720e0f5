# Judge panels: each review names its judge (`judge_name`), so several judges' attempts
# coexist under one unique key, and a screening records the panel it was screened by.
"""judge panels

Revision ID: 0010_judge_panels
Revises: 0009_review_workbench
Create Date: 2026-12-02 00:10:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_judge_panels"
down_revision: str | Sequence[str] | None = "0009_review_workbench"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KEY = ("screening_id", "role", "attempt")
NEW_KEY = ("screening_id", "role", "judge_name", "attempt")
OLD_UNIQUE = "uq_reviews_screening_id_role_attempt"
NEW_UNIQUE = "uq_reviews_screening_id_role_judge_name_attempt"
JUDGE_NAME_CHECK = "ck_reviews_judge_name"
JUDGE_NAME_RULE = "(role = 'judge') = (judge_name <> '')"
PANEL_RULE_CHECK = "ck_screenings_panel_rule"
# Every stored judge review is the single judge's: it was the only judge there was.
BACKFILL = "UPDATE reviews SET judge_name = 'judge' WHERE role = 'judge'"

# SQLite's batch mode rebuilds `reviews` and drops its triggers (0001's refusal to update,
# 0006's refusals to delete and to replace a stored row): they are dropped first, to be
# sure, and created again after the backfill, the replace trigger keyed as the table now is.
SQLITE_TRIGGERS = (
    "reviews_append_only",
    "reviews_append_only_delete",
    "reviews_append_only_replace",
)
SQLITE_UPDATE_TRIGGER = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only');
END
"""
SQLITE_DELETE_TRIGGER = """
CREATE TRIGGER reviews_append_only_delete BEFORE DELETE ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only');
END
"""
SQLITE_REPLACE_TRIGGER = """
CREATE TRIGGER reviews_append_only_replace BEFORE INSERT ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only: a stored row is never replaced')
    WHERE EXISTS (SELECT 1 FROM reviews WHERE id = NEW.id);
    SELECT RAISE(IGNORE) WHERE EXISTS (SELECT 1 FROM reviews WHERE {match});
END
"""
# PostgreSQL alters the table in place and keeps its triggers; the backfill passes the
# one that refuses updates only while it is switched off, in this transaction.
POSTGRES_UPDATE_TRIGGER = "reviews_append_only"


def upgrade() -> None:
    with op.batch_alter_table("screenings") as batch:
        batch.add_column(sa.Column("judges", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("panel_rule", sa.String(length=16), nullable=True))
        batch.create_check_constraint(
            op.f(PANEL_RULE_CHECK), "panel_rule IS NULL OR panel_rule IN ('unanimous', 'majority')"
        )
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        _drop_sqlite_triggers()
    with op.batch_alter_table("reviews") as batch:
        batch.add_column(
            sa.Column("judge_name", sa.String(length=32), nullable=False, server_default="")
        )
    _backfill(sqlite)
    with op.batch_alter_table("reviews") as batch:
        batch.drop_constraint(op.f(OLD_UNIQUE), type_="unique")
        batch.create_unique_constraint(op.f(NEW_UNIQUE), list(NEW_KEY))
        batch.create_check_constraint(op.f(JUDGE_NAME_CHECK), JUDGE_NAME_RULE)
    if sqlite:
        _create_sqlite_triggers(NEW_KEY)


def _backfill(sqlite: bool) -> None:
    if sqlite:  # no trigger on the table now
        op.execute(BACKFILL)
        return
    op.execute(f"ALTER TABLE reviews DISABLE TRIGGER {POSTGRES_UPDATE_TRIGGER}")
    op.execute(BACKFILL)
    op.execute(f"ALTER TABLE reviews ENABLE TRIGGER {POSTGRES_UPDATE_TRIGGER}")


def _drop_sqlite_triggers() -> None:
    for name in SQLITE_TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")


def _create_sqlite_triggers(key: Sequence[str]) -> None:
    match = " AND ".join(f"{column} = NEW.{column}" for column in key)
    op.execute(SQLITE_UPDATE_TRIGGER)
    op.execute(SQLITE_DELETE_TRIGGER)
    op.execute(SQLITE_REPLACE_TRIGGER.format(match=match))


def downgrade() -> None:
    # A panel's reviews cannot be held under the old key (two judges' first attempts would
    # clash): the downgrade stops there, which is the point, as reviews are append-only.
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        _drop_sqlite_triggers()
    with op.batch_alter_table("reviews") as batch:
        batch.drop_constraint(op.f(JUDGE_NAME_CHECK), type_="check")
        batch.drop_constraint(op.f(NEW_UNIQUE), type_="unique")
        batch.create_unique_constraint(op.f(OLD_UNIQUE), list(OLD_KEY))
        batch.drop_column("judge_name")
    if sqlite:
        _create_sqlite_triggers(OLD_KEY)
    with op.batch_alter_table("screenings") as batch:
        batch.drop_constraint(op.f(PANEL_RULE_CHECK), type_="check")
        batch.drop_column("panel_rule")
        batch.drop_column("judges")
