# The review workbench: decisions name defects, may be `unsure`, withdrawn (undo) or an
# admin's adjudication, and record whether they were made blind and when the claim began;
# queue items may need two people (`awaiting_second`, `disputed`); one unresolved item per
# pair, answering for every screening of it that waits on a person.
"""review workbench

Revision ID: 0009_review_workbench
Revises: 0008_metrics_role
Create Date: 2026-12-02 00:09:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_review_workbench"
down_revision: str | Sequence[str] | None = "0008_metrics_role"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC_DATETIME = sa.DateTime(timezone=True)
KIND_CHECK = "ck_decisions_kind"
DECISION_CHECK = "ck_decisions_decision"
VALUE_CHECK = "ck_decisions_value_matches_kind"
WITHDRAWS_CHECK = "ck_decisions_withdraws_matches_kind"
STATUS_CHECK = "ck_queue_items_status"

KINDS = "kind IN ('decision', 'reopen', 'withdrawal', 'adjudication')"
VALUES = "decision IS NULL OR decision IN ('faithful', 'mismatch', 'unsure')"
VALUE_MATCHES_KIND = (
    "(kind IN ('decision', 'adjudication') AND decision IS NOT NULL) "
    "OR (kind IN ('reopen', 'withdrawal') AND decision IS NULL)"
)
WITHDRAWS_MATCHES_KIND = "(kind = 'withdrawal') = (withdraws_id IS NOT NULL)"
STATUSES = "status IN ('open', 'claimed', 'awaiting_second', 'disputed', 'resolved')"

OLD_KINDS = "kind IN ('decision', 'reopen')"
OLD_VALUES = "decision IS NULL OR decision IN ('faithful', 'mismatch')"
OLD_VALUE_MATCHES_KIND = (
    "(kind = 'decision' AND decision IS NOT NULL) OR (kind = 'reopen' AND decision IS NULL)"
)
OLD_STATUSES = "status IN ('open', 'claimed', 'resolved')"

# SQLite's batch mode rebuilds `decisions` and drops its triggers (0003's UPDATE/DELETE
# refusals and 0006's refusal to replace a stored row): they are dropped first, to be sure,
# and created again after. PostgreSQL alters the table in place and keeps them.
SQLITE_DECISIONS_TRIGGERS = {
    "decisions_append_only_update": """
CREATE TRIGGER decisions_append_only_update BEFORE UPDATE ON decisions
BEGIN
    SELECT RAISE(ABORT, 'decisions are append-only');
END
""",
    "decisions_append_only_delete": """
CREATE TRIGGER decisions_append_only_delete BEFORE DELETE ON decisions
BEGIN
    SELECT RAISE(ABORT, 'decisions are append-only');
END
""",
    "decisions_append_only_replace": """
CREATE TRIGGER decisions_append_only_replace BEFORE INSERT ON decisions
BEGIN
    SELECT RAISE(ABORT, 'decisions are append-only: a stored row is never replaced')
    WHERE EXISTS (SELECT 1 FROM decisions WHERE id = NEW.id);
END
""",
}

# Every item answers for its own screening; of several unresolved items of one pair (queued
# before this migration) the oldest becomes the pair's open item.
BACKFILL_ITEM_SCREENINGS = """
INSERT INTO queue_item_screenings (queue_item_id, screening_id, created_at)
SELECT id, screening_id, created_at FROM queue_items
"""
BACKFILL_PAIR = """
UPDATE queue_items SET pair_id =
    (SELECT screenings.pair_id FROM screenings WHERE screenings.id = queue_items.screening_id)
"""
BACKFILL_OPEN_PAIR = """
UPDATE queue_items SET open_pair_id = pair_id
WHERE status <> 'resolved' AND id IN
    (SELECT MIN(id) FROM queue_items WHERE status <> 'resolved' GROUP BY pair_id)
"""


def upgrade() -> None:
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        for name in SQLITE_DECISIONS_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("decisions") as batch:
        batch.add_column(
            sa.Column("defects", sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
        )
        batch.add_column(
            sa.Column("blind", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("withdraws_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("claimed_at", UTC_DATETIME, nullable=True))
        batch.create_foreign_key(
            op.f("fk_decisions_withdraws_id_decisions"), "decisions", ["withdraws_id"], ["id"]
        )
        _replace_check(batch, KIND_CHECK, KINDS)
        _replace_check(batch, DECISION_CHECK, VALUES)
        _replace_check(batch, VALUE_CHECK, VALUE_MATCHES_KIND)
        batch.create_check_constraint(op.f(WITHDRAWS_CHECK), WITHDRAWS_MATCHES_KIND)
    if sqlite:
        for trigger in SQLITE_DECISIONS_TRIGGERS.values():
            op.execute(trigger)

    with op.batch_alter_table("queue_items") as batch:
        batch.add_column(sa.Column("pair_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("open_pair_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("claimed_at", UTC_DATETIME, nullable=True))
        batch.add_column(
            sa.Column("double_review", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.create_foreign_key(
            op.f("fk_queue_items_pair_id_pairs"), "pairs", ["pair_id"], ["id"]
        )
        batch.create_index(op.f("ix_queue_items_pair_id"), ["pair_id"])
        _replace_check(batch, STATUS_CHECK, STATUSES)
    op.execute(BACKFILL_PAIR)
    op.execute(BACKFILL_OPEN_PAIR)
    with op.batch_alter_table("queue_items") as batch:
        batch.create_unique_constraint(op.f("uq_queue_items_open_pair_id"), ["open_pair_id"])

    op.create_table(
        "queue_item_screenings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("queue_item_id", sa.Integer(), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.ForeignKeyConstraint(
            ["queue_item_id"],
            ["queue_items.id"],
            name=op.f("fk_queue_item_screenings_queue_item_id_queue_items"),
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"],
            ["screenings.id"],
            name=op.f("fk_queue_item_screenings_screening_id_screenings"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_queue_item_screenings")),
        sa.UniqueConstraint("screening_id", name=op.f("uq_queue_item_screenings_screening_id")),
    )
    op.create_index(
        op.f("ix_queue_item_screenings_queue_item_id"), "queue_item_screenings", ["queue_item_id"]
    )
    op.execute(BACKFILL_ITEM_SCREENINGS)


def _replace_check(batch: object, name: str, condition: str) -> None:
    batch.drop_constraint(op.f(name), type_="check")  # type: ignore[attr-defined]
    batch.create_check_constraint(op.f(name), condition)  # type: ignore[attr-defined]


def downgrade() -> None:
    # Rows only this revision can hold go first: the old checks would refuse them. Decisions
    # are append-only, so a downgrade over withdrawals, adjudications or `unsure` rows stops
    # at the trigger, which is the point: the trail is not thrown away by a downgrade.
    op.drop_index(op.f("ix_queue_item_screenings_queue_item_id"), "queue_item_screenings")
    op.drop_table("queue_item_screenings")
    with op.batch_alter_table("queue_items") as batch:
        batch.drop_constraint(op.f("uq_queue_items_open_pair_id"), type_="unique")
        batch.drop_index(op.f("ix_queue_items_pair_id"))
        batch.drop_constraint(op.f("fk_queue_items_pair_id_pairs"), type_="foreignkey")
        _replace_check(batch, STATUS_CHECK, OLD_STATUSES)
        batch.drop_column("claimed_at")
        batch.drop_column("double_review")
        batch.drop_column("open_pair_id")
        batch.drop_column("pair_id")
    sqlite = op.get_bind().dialect.name == "sqlite"
    if sqlite:
        for name in SQLITE_DECISIONS_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("decisions") as batch:
        batch.drop_constraint(op.f(WITHDRAWS_CHECK), type_="check")
        _replace_check(batch, VALUE_CHECK, OLD_VALUE_MATCHES_KIND)
        _replace_check(batch, DECISION_CHECK, OLD_VALUES)
        _replace_check(batch, KIND_CHECK, OLD_KINDS)
        batch.drop_constraint(op.f("fk_decisions_withdraws_id_decisions"), type_="foreignkey")
        batch.drop_column("claimed_at")
        batch.drop_column("withdraws_id")
        batch.drop_column("blind")
        batch.drop_column("defects")
    if sqlite:
        for trigger in SQLITE_DECISIONS_TRIGGERS.values():
            op.execute(trigger)
