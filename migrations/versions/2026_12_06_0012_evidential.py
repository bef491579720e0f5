# Each review records whether its model was marked evidential (FAITHSCREEN_*_EVIDENTIAL)
# when the call was made, so an audit and a re-score rule it as it was screened.
"""evidential

Revision ID: 0012_evidential
Revises: 0010_judge_panels
Create Date: 2026-12-06 00:12:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_evidential"
down_revision: str | Sequence[str] | None = "0010_judge_panels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Every review stored before is evidential: no model could be marked otherwise, and
    # its screening was decided as if it were. A plain ADD COLUMN with a constant default,
    # not a batch: SQLite's batch mode would rebuild `reviews` and drop its append-only
    # triggers, and neither database rewrites (or updates) a stored row to add it.
    op.add_column(
        "reviews",
        sa.Column("evidential", sa.Boolean(), nullable=False, server_default=sa.true()),
    )


def downgrade() -> None:
    op.drop_column("reviews", "evidential")
