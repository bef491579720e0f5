# Calibration: a screening may carry what the client knows the pair to be (its label) and
# tags to slice by, so the screen's error rates can be measured on the screenings it ran.
"""labels

Revision ID: 0005_labels
Revises: 0004_rescores
Create Date: 2026-12-01 00:05:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_labels"
down_revision: str | Sequence[str] | None = "0004_rescores"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LABEL_CHECK = "ck_screenings_label"


def upgrade() -> None:
    # SQLite cannot add a CHECK in place: batch mode rebuilds `screenings` (no trigger
    # lives on it, so nothing is lost in the copy). Rows stored before carry no tags.
    with op.batch_alter_table("screenings") as batch:
        batch.add_column(sa.Column("label", sa.String(length=16), nullable=True))
        batch.add_column(
            sa.Column("tags", sa.JSON(), nullable=False, server_default=sa.text("'[]'"))
        )
        batch.create_check_constraint(
            op.f(LABEL_CHECK), "label IS NULL OR label IN ('faithful', 'mismatch')"
        )
        batch.create_index(op.f("ix_screenings_batch_id_label"), ["batch_id", "label"])


def downgrade() -> None:
    with op.batch_alter_table("screenings") as batch:
        batch.drop_index(op.f("ix_screenings_batch_id_label"))
        batch.drop_constraint(op.f(LABEL_CHECK), type_="check")
        batch.drop_column("tags")
        batch.drop_column("label")
