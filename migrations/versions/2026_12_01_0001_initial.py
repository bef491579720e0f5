# Initial schema: pairs, screenings, append-only reviews, and the job queue (issue 3).
"""initial schema

Revision ID: 0001_initial
Revises:
Create Date: 2026-12-01 00:01:00+00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001_initial"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Timestamps are UTC; app.db.types.UTCDateTime maps them on SQLite.
UTC_DATETIME = sa.DateTime(timezone=True)

# Reviews are append-only. The ORM refuses updates too; the trigger covers raw SQL.
# NOTE: SQLite batch mode (a future ALTER of `reviews`) recreates the table and drops
# triggers: such a migration must create this trigger again.
SQLITE_REVIEWS_TRIGGER = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
BEGIN
    SELECT RAISE(ABORT, 'reviews are append-only');
END
"""
POSTGRES_REVIEWS_FUNCTION = """
CREATE FUNCTION reviews_refuse_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'reviews are append-only (review %)', OLD.id;
END
$$
"""
POSTGRES_REVIEWS_TRIGGER = """
CREATE TRIGGER reviews_append_only BEFORE UPDATE ON reviews
FOR EACH ROW EXECUTE FUNCTION reviews_refuse_update()
"""


def upgrade() -> None:
    create_pairs()
    create_screenings()
    create_reviews()
    create_jobs()
    create_reviews_trigger()


def create_pairs() -> None:
    op.create_table(
        "pairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("informal", sa.Text(), nullable=False),
        sa.Column("formal", sa.Text(), nullable=False),
        sa.Column("header", sa.Text(), nullable=False),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pairs")),
        sa.UniqueConstraint("content_hash", name=op.f("uq_pairs_content_hash")),
    )


def create_screenings() -> None:
    op.create_table(
        "screenings",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("pair_id", sa.Integer(), nullable=False),
        sa.Column("external_id", sa.String(), nullable=True),
        sa.Column("batch_id", sa.String(length=36), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("policy_version", sa.String(length=64), nullable=True),
        sa.Column("evidence_version", sa.String(length=64), nullable=True),
        sa.Column("confirmations", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.Column("updated_at", UTC_DATETIME, nullable=False),
        sa.Column("finished_at", UTC_DATETIME, nullable=True),
        sa.CheckConstraint(
            "outcome IS NULL OR outcome IN ('passed', 'flagged', 'needs_review')",
            name=op.f("ck_screenings_outcome"),
        ),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done')", name=op.f("ck_screenings_status")
        ),
        sa.ForeignKeyConstraint(
            ["pair_id"], ["pairs.id"], name=op.f("fk_screenings_pair_id_pairs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_screenings")),
    )
    for column in ("batch_id", "external_id", "outcome", "pair_id", "status"):
        op.create_index(op.f(f"ix_screenings_{column}"), "screenings", [column])
    op.create_index("ix_screenings_created_at_id", "screenings", ["created_at", "id"])


def create_reviews() -> None:
    op.create_table(
        "reviews",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("prompt_version", sa.String(length=64), nullable=True),
        sa.Column("messages", sa.JSON(), nullable=True),
        sa.Column("messages_sha256", sa.String(length=64), nullable=True),
        sa.Column("raw_response", sa.Text(), nullable=True),
        sa.Column("raw_body", sa.Text(), nullable=True),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("parse_status", sa.String(length=32), nullable=False),
        sa.Column("back_translation", sa.Text(), nullable=True),
        sa.Column("issues", sa.Text(), nullable=True),
        sa.Column("finish_reason", sa.String(length=64), nullable=True),
        sa.Column("refusal", sa.Text(), nullable=True),
        sa.Column("model", sa.String(), nullable=True),
        sa.Column("usage", sa.JSON(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("latency_ms", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("parser_version", sa.String(length=64), nullable=False),
        sa.Column("supplied", sa.Boolean(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=True),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.CheckConstraint(
            "purpose IN ('review', 'format_retry', 'confirmation')",
            name=op.f("ck_reviews_purpose"),
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"], ["screenings.id"], name=op.f("fk_reviews_screening_id_screenings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint(
            "screening_id", "role", "attempt", name=op.f("uq_reviews_screening_id_role_attempt")
        ),
    )


def create_jobs() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("screening_id", sa.String(length=36), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("run_after", UTC_DATETIME, nullable=False),
        sa.Column("lease_owner", sa.String(), nullable=True),
        sa.Column("lease_expires_at", UTC_DATETIME, nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", UTC_DATETIME, nullable=False),
        sa.Column("updated_at", UTC_DATETIME, nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done', 'dead')", name=op.f("ck_jobs_status")
        ),
        sa.ForeignKeyConstraint(
            ["screening_id"], ["screenings.id"], name=op.f("fk_jobs_screening_id_screenings")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
        sa.UniqueConstraint("screening_id", name=op.f("uq_jobs_screening_id")),
    )
    op.create_index("ix_jobs_status_run_after", "jobs", ["status", "run_after"])


def create_reviews_trigger() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(POSTGRES_REVIEWS_FUNCTION)
        op.execute(POSTGRES_REVIEWS_TRIGGER)
    else:
        op.execute(SQLITE_REVIEWS_TRIGGER)


def downgrade() -> None:
    op.drop_table("jobs")
    op.drop_table("reviews")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION reviews_refuse_update()")
    op.drop_table("screenings")
    op.drop_table("pairs")
