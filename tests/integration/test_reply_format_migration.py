"""Migration 0013 on a database that already holds reviews: each stored review was asked as
text and keeps the parser version it was read with, a new review can record another format
and a grammar version, and the append-only triggers still refuse every rewrite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config
from tests.integration.test_evidential_migration import NOW, REVIEW, ROWS


@pytest.fixture
def upgraded(empty_database_url: str) -> Iterator[sa.Engine]:
    """Two reviews stored at 0012, then the database upgraded to 0013."""
    url = empty_database_url
    command.upgrade(alembic_config(url), "0012_evidential")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.exec_driver_sql(statement)
    command.upgrade(alembic_config(url), "0013_reply_format")
    yield engine
    engine.dispose()


def formats(engine: sa.Engine) -> list[tuple[str, int, str, str | None, str]]:
    with engine.connect() as connection:
        rows = connection.exec_driver_sql(
            "SELECT role, attempt, reply_format, grammar_version, parser_version FROM reviews "
            "ORDER BY role, attempt"
        )
        return [tuple(row) for row in rows]  # type: ignore[misc]


def test_stored_reviews_are_text_with_their_old_parser_version(upgraded: sa.Engine) -> None:
    assert formats(upgraded) == [
        ("judge", 1, "text", None, "p1"),
        ("translator", 1, "text", None, "p1"),
    ]
    new = REVIEW.format(
        role="judge",
        judge="judge",
        attempt=2,
        now=NOW,
        extra=", reply_format, grammar_version",
        value=", 'grammar', 'grammar-1'",
    )
    with upgraded.begin() as connection:
        connection.exec_driver_sql(new)
    assert formats(upgraded)[1] == ("judge", 2, "grammar", "grammar-1", "p1")


def test_reviews_stay_append_only(upgraded: sa.Engine) -> None:
    refused = ["UPDATE reviews SET reply_format = 'tool'", "DELETE FROM reviews"]
    for statement in refused:
        with pytest.raises(sa.exc.DBAPIError, match="append-only"), upgraded.begin() as connection:
            connection.exec_driver_sql(statement)
    assert {row[2] for row in formats(upgraded)} == {"text"}
