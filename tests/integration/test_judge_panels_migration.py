"""Migration 0010 on a database that already holds reviews: every judge review becomes the
single judge's (`judge`), translator reviews name no judge, the append-only triggers still
refuse every rewrite (SQLite's batch mode rebuilt the table), and the new unique key lets
two judges' first attempts coexist while one judge's attempt is still stored once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config

NOW = "2026-12-01 00:00:00"
ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    "INSERT INTO screenings (id, pair_id, status, reasons, evidence, confirmations, "
    f"created_at, updated_at) VALUES ('s1', 1, 'done', '[]', '[]', 0, '{NOW}', '{NOW}')",
    *(
        "INSERT INTO reviews (screening_id, role, attempt, purpose, verdict, parse_status, "
        "usage, parser_version, supplied, created_at) VALUES "
        f"('s1', '{role}', 1, 'review', 'faithful', 'ok', '{{}}', 'p1', false, '{NOW}')"
        for role in ("translator", "judge")
    ),
]
REVIEW = (
    "INSERT INTO reviews (screening_id, role, judge_name, attempt, purpose, verdict, "
    "parse_status, usage, parser_version, supplied, created_at) VALUES "
    "('s1', 'judge', '{judge}', 1, 'review', 'faithful', 'ok', '{{}}', 'p1', false, '{now}')"
)


@pytest.fixture
def upgraded(empty_database_url: str) -> Iterator[sa.Engine]:
    """A database with a single-judge screening's reviews at 0009, then upgraded to 0010."""
    url = empty_database_url
    command.upgrade(alembic_config(url), "0009_review_workbench")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.exec_driver_sql(statement)
    command.upgrade(alembic_config(url), "0010_judge_panels")
    yield engine
    engine.dispose()


def test_stored_reviews_are_the_single_judges_and_stay_append_only(
    upgraded: sa.Engine,
) -> None:
    with upgraded.connect() as connection:
        names = connection.exec_driver_sql("SELECT role, judge_name FROM reviews ORDER BY role")
        assert [tuple(row) for row in names] == [("judge", "judge"), ("translator", "")]
        panel = connection.exec_driver_sql("SELECT judges, panel_rule FROM screenings").one()
        assert tuple(panel) == (None, None)
    refused = [
        "UPDATE reviews SET verdict = 'mismatch'",
        "DELETE FROM reviews",
        # Every judge review names its judge, and no translator review does.
        REVIEW.format(judge="", now=NOW),
        REVIEW.format(judge="x", now=NOW).replace("'judge', 'x'", "'translator', 'x'"),
        "UPDATE screenings SET panel_rule = 'plurality'",
    ]
    if upgraded.dialect.name == "sqlite":
        refused.append("INSERT OR REPLACE INTO reviews SELECT * FROM reviews WHERE role = 'judge'")
    for statement in refused:
        with pytest.raises(sa.exc.DBAPIError), upgraded.begin() as connection:
            connection.exec_driver_sql(statement)
    with upgraded.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM reviews").scalar() == 2


def test_two_judges_first_attempts_coexist_but_one_attempt_is_stored_once(
    upgraded: sa.Engine,
) -> None:
    with upgraded.begin() as connection:
        for judge in ("a", "b"):
            connection.exec_driver_sql(REVIEW.format(judge=judge, now=NOW))
    with pytest.raises(sa.exc.IntegrityError), upgraded.begin() as connection:
        if upgraded.dialect.name == "sqlite":
            # SQLite's replace trigger drops a stored key silently: a plain insert of one
            # still fails on the unique key once the trigger lets it through.
            connection.exec_driver_sql("DROP TRIGGER reviews_append_only_replace")
        connection.exec_driver_sql(REVIEW.format(judge="a", now=NOW))
    with upgraded.connect() as connection:
        count = "SELECT count(*) FROM reviews WHERE role = 'judge'"
        assert connection.exec_driver_sql(count).scalar() == 3


def test_the_sqlite_replace_trigger_keys_by_judge(upgraded: sa.Engine) -> None:
    if upgraded.dialect.name != "sqlite":
        pytest.skip("SQLite's INSERT OR REPLACE guard")
    with upgraded.begin() as connection:
        connection.exec_driver_sql(
            REVIEW.format(judge="a", now=NOW).replace("INSERT", "INSERT OR REPLACE")
        )
        connection.exec_driver_sql(
            REVIEW.format(judge="a", now=NOW).replace("INSERT", "INSERT OR REPLACE")
        )
    with upgraded.connect() as connection:
        rows = connection.exec_driver_sql("SELECT judge_name FROM reviews WHERE role = 'judge'")
        # a's first attempt went in once (the second was dropped, as ON CONFLICT DO NOTHING
        # would); the single judge's stored review is untouched.
        assert sorted(row[0] for row in rows) == ["a", "judge"]
