# A `metrics` access role, so a Prometheus scraper holds a key that may read /metrics and
# nothing else instead of an admin key.
"""metrics role

Revision ID: 0008_metrics_role
Revises: 0007_web_sessions
Create Date: 2026-12-01 00:08:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_metrics_role"
down_revision: str | Sequence[str] | None = "0007_web_sessions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROLE_CHECK = "ck_api_keys_role"


def upgrade() -> None:
    # SQLite cannot change a CHECK in place: batch mode rebuilds `api_keys` (no trigger
    # lives on it, so nothing is lost in the copy).
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint(op.f(ROLE_CHECK), type_="check")
        batch.create_check_constraint(
            op.f(ROLE_CHECK), "role IN ('submitter', 'reviewer', 'admin', 'metrics')"
        )


def downgrade() -> None:
    op.execute(
        "DELETE FROM web_sessions WHERE api_key_id IN "
        "(SELECT id FROM api_keys WHERE role = 'metrics')"
    )
    op.execute("DELETE FROM api_keys WHERE role = 'metrics'")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_constraint(op.f(ROLE_CHECK), type_="check")
        batch.create_check_constraint(
            op.f(ROLE_CHECK), "role IN ('submitter', 'reviewer', 'admin')"
        )
