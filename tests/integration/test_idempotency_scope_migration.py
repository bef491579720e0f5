"""Migration 0020 on a database that already holds keys: each stored Idempotency-Key goes to
the scope of the key that queued its work (the job's submitter), else to "anonymous"; the
downgrade makes keys global again, the earliest holder keeping each (SQLite and
PostgreSQL)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config

BEFORE = "0019_lean_reader"
NOW = "2026-12-06 00:00:00"
LATER = "2026-12-06 00:00:05"
SCREENING = (
    "INSERT INTO screenings (id, pair_id, batch_id, batch_index, status, reasons, evidence, "
    "confirmations, created_at, updated_at) VALUES ('{id}', 1, {batch}, {index}, 'queued', "
    f"'[]', '[]', 0, '{NOW}', '{NOW}')"
)
JOB = (
    "INSERT INTO jobs (id, screening_id, status, attempts, run_after, created_at, updated_at, "
    f"submitter) VALUES ({{n}}, '{{id}}', 'queued', 0, '{NOW}', '{NOW}', '{NOW}', '{{who}}')"
)
BATCH = (
    "INSERT INTO batches (id, total, idempotency_key, body_sha256, created_at) "
    "VALUES ('{id}', 1, '{key}', 'x', '{at}')"
)
KEY = (
    "INSERT INTO screening_keys (idempotency_key, screening_id, body_sha256, created_at) "
    "VALUES ('{key}', '{id}', 'x', '{NOW}')"
)
ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    BATCH.format(id="b1", key="k1", at=NOW),
    BATCH.format(id="b0", key="k0", at=NOW),  # its jobs removed (retention): not known
    SCREENING.format(id="in-batch", batch="'b1'", index=0),
    SCREENING.format(id="single", batch="NULL", index="NULL"),
    SCREENING.format(id="supplied", batch="NULL", index="NULL"),  # decided at once: no job
    JOB.format(n=1, id="in-batch", who="pipeline-a"),
    JOB.format(n=2, id="single", who="pipeline-b"),
    KEY.format(key="k1", id="single", NOW=NOW),
    KEY.format(key="k2", id="supplied", NOW=NOW),
]


def rows(engine: sa.Engine, sql: str) -> set[tuple[object, ...]]:
    with engine.connect() as connection:
        return {tuple(row) for row in connection.exec_driver_sql(sql).all()}


def test_stored_keys_go_to_their_submitters_scope_and_back(empty_database_url: str) -> None:
    url = empty_database_url
    command.upgrade(alembic_config(url), BEFORE)
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.begin() as connection:
            for statement in ROWS:
                connection.exec_driver_sql(statement)
        command.upgrade(alembic_config(url), "head")
        keys = "SELECT scope, idempotency_key, screening_id FROM screening_keys"
        batches = "SELECT id, idempotency_scope, idempotency_key FROM batches"
        assert rows(engine, keys) == {
            ("pipeline-b", "k1", "single"),
            ("anonymous", "k2", "supplied"),
        }
        assert rows(engine, batches) == {("b1", "pipeline-a", "k1"), ("b0", "anonymous", "k0")}
        # Another key takes k1 later, for a single and for a batch.
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "INSERT INTO screening_keys (scope, idempotency_key, screening_id, "
                f"body_sha256, created_at) VALUES ('pipeline-c', 'k1', 'in-batch', 'y', '{LATER}')"
            )
            connection.exec_driver_sql(
                "INSERT INTO batches (id, total, idempotency_scope, idempotency_key, "
                f"body_sha256, created_at) VALUES ('b2', 1, 'pipeline-c', 'k1', 'y', '{LATER}')"
            )
        command.downgrade(alembic_config(url), BEFORE)
        # Global again: the earliest holder of k1 keeps it.
        keys = "SELECT idempotency_key, screening_id FROM screening_keys"
        assert rows(engine, keys) == {("k1", "single"), ("k2", "supplied")}
        batches = "SELECT id, idempotency_key FROM batches"
        assert rows(engine, batches) == {("b1", "k1"), ("b0", "k0"), ("b2", None)}
        command.upgrade(alembic_config(url), "head")
    finally:
        engine.dispose()
