"""Migration 0015 on a database that already holds work: a batch's screenings and their jobs
become batch work, single screenings stay interactive, and the queued jobs are claimed in
that order afterwards (SQLite and PostgreSQL)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config

NOW = "2026-12-06 00:00:00"
SCREENING = (
    "INSERT INTO screenings (id, pair_id, batch_id, batch_index, status, reasons, evidence, "
    "confirmations, created_at, updated_at) VALUES ('{id}', 1, {batch}, {index}, 'queued', "
    f"'[]', '[]', 0, '{NOW}', '{NOW}')"
)
JOB = (
    "INSERT INTO jobs (id, screening_id, status, attempts, run_after, created_at, updated_at) "
    f"VALUES ({{n}}, '{{id}}', 'queued', 0, '{NOW}', '{NOW}', '{NOW}')"
)
ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    f"INSERT INTO batches (id, total, body_sha256, created_at) VALUES ('b1', 2, 'x', '{NOW}')",
    SCREENING.format(id="in-batch-1", batch="'b1'", index=0),
    SCREENING.format(id="in-batch-2", batch="'b1'", index=1),
    SCREENING.format(id="single", batch="NULL", index="NULL"),
    # The batch's jobs are older: FIFO would claim them first.
    JOB.format(n=1, id="in-batch-1"),
    JOB.format(n=2, id="in-batch-2"),
    JOB.format(n=3, id="single"),
]


def test_stored_work_is_classed_as_it_would_be_now(empty_database_url: str) -> None:
    url = empty_database_url
    command.upgrade(alembic_config(url), "0014_provider_budgets")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.begin() as connection:
            for statement in ROWS:
                connection.exec_driver_sql(statement)
        command.upgrade(alembic_config(url), "0015_queue_priorities")
        with engine.connect() as connection:
            priorities = dict(
                connection.exec_driver_sql("SELECT id, priority FROM screenings").all()
            )
            claim_order = connection.exec_driver_sql(
                "SELECT screening_id FROM jobs WHERE status = 'queued' "
                "ORDER BY priority_rank, turn, id"
            ).scalars()
            order = list(claim_order)
    finally:
        engine.dispose()
    assert priorities == {"in-batch-1": "batch", "in-batch-2": "batch", "single": "interactive"}
    assert order == ["single", "in-batch-1", "in-batch-2"]
