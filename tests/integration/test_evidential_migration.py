"""Migration 0012 on a database that already holds reviews: each stored review is
evidential (no model could be marked otherwise when it was made), a new review can say it
was not, and the append-only triggers still refuse every rewrite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config

NOW = "2026-12-06 00:00:00"
REVIEW = (
    "INSERT INTO reviews (screening_id, role, judge_name, attempt, purpose, verdict, "
    "parse_status, usage, parser_version, supplied, created_at{extra}) VALUES "
    "('s1', '{role}', '{judge}', {attempt}, 'review', 'faithful', 'ok', '{{}}', 'p1', false, "
    "'{now}'{value})"
)
ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    "INSERT INTO screenings (id, pair_id, status, reasons, evidence, confirmations, "
    f"created_at, updated_at) VALUES ('s1', 1, 'done', '[]', '[]', 0, '{NOW}', '{NOW}')",
    REVIEW.format(role="translator", judge="", attempt=1, now=NOW, extra="", value=""),
    REVIEW.format(role="judge", judge="judge", attempt=1, now=NOW, extra="", value=""),
]


@pytest.fixture
def upgraded(empty_database_url: str) -> Iterator[sa.Engine]:
    """Two reviews stored at 0010, then the database upgraded to 0012."""
    url = empty_database_url
    command.upgrade(alembic_config(url), "0010_judge_panels")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.exec_driver_sql(statement)
    command.upgrade(alembic_config(url), "0012_evidential")
    yield engine
    engine.dispose()


def evidential(engine: sa.Engine) -> list[tuple[str, int, bool]]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT role, attempt, evidential FROM reviews ORDER BY role, attempt"
        )
        return [(role, attempt, bool(flag)) for role, attempt, flag in rows]


def test_stored_reviews_are_evidential_and_a_new_one_may_say_otherwise(
    upgraded: sa.Engine,
) -> None:
    assert evidential(upgraded) == [("judge", 1, True), ("translator", 1, True)]
    new = REVIEW.format(
        role="judge", judge="judge", attempt=2, now=NOW, extra=", evidential", value=", false"
    )
    with upgraded.begin() as connection:
        connection.exec_driver_sql(new)
    assert evidential(upgraded)[1] == ("judge", 2, False)


def test_reviews_stay_append_only(upgraded: sa.Engine) -> None:
    refused = ["UPDATE reviews SET evidential = false", "DELETE FROM reviews"]
    if upgraded.dialect.name == "sqlite":
        refused.append("INSERT OR REPLACE INTO reviews SELECT * FROM reviews")
    for statement in refused:
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), upgraded.begin() as connection:
            connection.exec_driver_sql(statement)
    assert evidential(upgraded) == [("judge", 1, True), ("translator", 1, True)]
