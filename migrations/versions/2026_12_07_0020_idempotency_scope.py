# Idempotency-Keys are each API key's own: two pipelines sending one key no longer meet.
"""idempotency keys scoped per API key

Revision ID: 0020_idempotency_scope
Revises: 0019_lean_reader
Create Date: 2026-12-07 00:20:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_idempotency_scope"
down_revision: str | Sequence[str] | None = "0019_lean_reader"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A key stored before this revision belongs to the key that queued its screening (the
# job's submitter, 0015); where that is not known (no job: replies supplied, the job
# removed after FAITHSCREEN_JOB_RETENTION_DAYS, or queued before 0015) to "anonymous",
# app.auth.principal.ANONYMOUS's name, the scope of every request with auth off. So a
# deployment without auth finds its keys as before, and with auth such a key is found by
# no key: a repeat of it makes a new screening or batch instead of another key's.
UNKNOWN = "'anonymous'"
SCREENING_KEYS_BACKFILL = (
    "UPDATE screening_keys SET scope = COALESCE((SELECT jobs.submitter FROM jobs "
    f"WHERE jobs.screening_id = screening_keys.screening_id), {UNKNOWN})"
)
BATCHES_BACKFILL = (
    "UPDATE batches SET idempotency_scope = COALESCE((SELECT MIN(jobs.submitter) FROM jobs "
    "JOIN screenings ON screenings.id = jobs.screening_id "
    f"WHERE screenings.batch_id = batches.id), {UNKNOWN}) WHERE idempotency_key IS NOT NULL"
)


def upgrade() -> None:
    op.add_column("screening_keys", sa.Column("scope", sa.String(length=100), nullable=True))
    op.execute(SCREENING_KEYS_BACKFILL)
    # No triggers on either table, so SQLite's batch mode (a copy of the table) loses none.
    with op.batch_alter_table("screening_keys") as batch:
        batch.alter_column("scope", existing_type=sa.String(length=100), nullable=False)
        batch.drop_constraint(op.f("pk_screening_keys"), type_="primary")
        batch.create_primary_key(op.f("pk_screening_keys"), ["scope", "idempotency_key"])
    op.add_column("batches", sa.Column("idempotency_scope", sa.String(length=100), nullable=True))
    op.execute(BATCHES_BACKFILL)
    with op.batch_alter_table("batches") as batch:
        batch.drop_constraint(op.f("uq_batches_idempotency_key"), type_="unique")
        batch.create_unique_constraint(
            op.f("uq_batches_idempotency_scope_idempotency_key"),
            ["idempotency_scope", "idempotency_key"],
        )


def downgrade() -> None:
    # Keys global again: of the keys several scopes hold, the earliest keeps it (a batch's
    # key is cleared on the later batches; a single's later rows are deleted).
    op.execute(
        "UPDATE batches SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND "
        "EXISTS (SELECT 1 FROM batches AS earlier WHERE "
        "earlier.idempotency_key = batches.idempotency_key AND "
        "(earlier.created_at < batches.created_at OR "
        "(earlier.created_at = batches.created_at AND earlier.id < batches.id)))"
    )
    with op.batch_alter_table("batches") as batch:
        batch.drop_constraint(op.f("uq_batches_idempotency_scope_idempotency_key"), type_="unique")
        batch.create_unique_constraint(op.f("uq_batches_idempotency_key"), ["idempotency_key"])
        batch.drop_column("idempotency_scope")
    op.execute(
        "DELETE FROM screening_keys WHERE EXISTS (SELECT 1 FROM screening_keys AS earlier "
        "WHERE earlier.idempotency_key = screening_keys.idempotency_key AND "
        "(earlier.created_at < screening_keys.created_at OR "
        "(earlier.created_at = screening_keys.created_at AND "
        "earlier.scope < screening_keys.scope)))"
    )
    with op.batch_alter_table("screening_keys") as batch:
        batch.drop_constraint(op.f("pk_screening_keys"), type_="primary")
        batch.create_primary_key(op.f("pk_screening_keys"), ["idempotency_key"])
        batch.drop_column("scope")
