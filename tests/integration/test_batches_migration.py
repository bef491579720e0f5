"""The batches migration on a database that already holds screenings: every row and
constraint survives (on SQLite, batch mode rebuilds the screenings table), and downgrading
gives the schema before batches (0001_initial) back with the data."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config, upgrade_to_head

NOW = "2026-12-01 00:00:00"
ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    "INSERT INTO screenings (id, pair_id, status, reasons, evidence, confirmations, "
    f"created_at, updated_at) VALUES ('s1', 1, 'queued', '[]', '[]', 0, '{NOW}', '{NOW}')",
    "INSERT INTO jobs (id, screening_id, status, attempts, run_after, created_at, updated_at) "
    f"VALUES (1, 's1', 'queued', 0, '{NOW}', '{NOW}', '{NOW}')",
    "INSERT INTO reviews (screening_id, role, attempt, purpose, verdict, parse_status, "
    "usage, parser_version, supplied, created_at) VALUES "
    f"('s1', 'judge', 1, 'review', 'faithful', 'ok', '{{}}', 'p1', false, '{NOW}')",
]


@pytest.fixture
def at_initial(empty_database_url: str) -> Iterator[sa.Engine]:
    """A database at the first revision (0001_initial), holding one screening with a job
    and a review."""
    url = empty_database_url
    command.upgrade(alembic_config(url), "0001_initial")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.exec_driver_sql(statement)
    yield engine
    engine.dispose()


def url_of(engine: sa.Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def test_upgrading_keeps_every_row_and_constraint(at_initial: sa.Engine) -> None:
    upgrade_to_head(url_of(at_initial))
    with at_initial.connect() as connection:
        row = connection.exec_driver_sql("SELECT id, batch_id, batch_index FROM screenings").one()
        assert tuple(row) == ("s1", None, None)
        for table in ("jobs", "reviews", "pairs"):
            assert connection.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar() == 1
        if at_initial.dialect.name == "sqlite":
            assert connection.exec_driver_sql("PRAGMA foreign_key_check").all() == []
    refused = [
        "UPDATE screenings SET status = 'lost'",  # the CHECK constraint survived
        "UPDATE screenings SET batch_id = 'no-such-batch'",  # the new foreign key holds
        "UPDATE reviews SET verdict = 'mismatch'",  # the append-only trigger survived
    ]
    for statement in refused:
        with pytest.raises(sa.exc.DBAPIError), at_initial.begin() as connection:
            if at_initial.dialect.name == "sqlite":
                connection.exec_driver_sql("PRAGMA foreign_keys=ON")
            connection.exec_driver_sql(statement)


def test_downgrading_to_the_initial_schema_keeps_the_screenings(at_initial: sa.Engine) -> None:
    url = url_of(at_initial)
    upgrade_to_head(url)
    command.downgrade(alembic_config(url), "0001_initial")
    with at_initial.connect() as connection:
        tables = set(sa.inspect(connection).get_table_names())
        columns = {c["name"] for c in sa.inspect(connection).get_columns("screenings")}
        assert connection.exec_driver_sql("SELECT id FROM screenings").scalar() == "s1"
    assert "batches" not in tables and "batch_index" not in columns
