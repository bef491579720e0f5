"""Migration 0018 on a database that already holds screenings, reviews and jobs: the totals
/metrics reads are counted once from what is stored (as the GROUP BYs did: tokens only
where the provider sent an integer, a long model name cut as a label is), and the
triggers count what comes after."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command

from app.db.engine import sync_url
from app.db.migrate import alembic_config

NOW = "2026-12-06 00:00:00"
LONG_MODEL = "m" * 300
REVIEW = (
    "INSERT INTO reviews (screening_id, role, judge_name, attempt, purpose, verdict, "
    "parse_status, usage, parser_version, supplied, created_at, model, latency_ms) VALUES "
    "('s1', '{role}', '{judge}', {attempt}, 'review', 'faithful', '{status}', '{usage}', "
    "'p1', {supplied}, '{now}', {model}, {latency})"
)


def review(attempt: int, **values: object) -> str:
    row: dict[str, object] = {
        "role": "translator", "judge": "", "status": "ok", "usage": "{}",
        "supplied": "false", "model": "'x'", "latency": "NULL", "now": NOW,
    }  # fmt: skip
    return REVIEW.format(attempt=attempt, **(row | values))


ROWS = [
    "INSERT INTO pairs (id, content_hash, informal, formal, header, created_at) "
    f"VALUES (1, 'h', 'i', 'f', '', '{NOW}')",
    "INSERT INTO screenings (id, pair_id, status, outcome, reasons, evidence, confirmations, "
    f"created_at, updated_at) VALUES ('s1', 1, 'done', 'passed', '[]', '[]', 0, '{NOW}', '{NOW}')",
    "INSERT INTO screenings (id, pair_id, status, reasons, evidence, confirmations, "
    f"created_at, updated_at) VALUES ('s2', 1, 'queued', '[]', '[]', 0, '{NOW}', '{NOW}')",
    f"INSERT INTO jobs (screening_id, status, attempts, run_after, created_at, updated_at) "
    f"VALUES ('s2', 'queued', 0, '{NOW}', '{NOW}', '{NOW}')",
    review(1, usage='{"prompt_tokens": 100, "completion_tokens": 7}', latency=300),
    review(2, usage='{"prompt_tokens": true, "completion_tokens": 1.5}', latency=700_000),
    review(3, model=f"'{LONG_MODEL}'", status="missing"),
    review(1, role="judge", judge="judge", supplied="true", model="NULL"),
]


@pytest.fixture
def upgraded(empty_database_url: str) -> Iterator[sa.Engine]:
    url = empty_database_url
    command.upgrade(alembic_config(url), "0017_review_threads")
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        for statement in ROWS:
            connection.exec_driver_sql(statement)
    command.upgrade(alembic_config(url), "head")
    yield engine
    engine.dispose()


def totals(engine: sa.Engine) -> dict[tuple[object, ...], tuple[int, ...]]:
    """Totals plus unfolded changes, by key (as a scrape sums them), zero rows left out."""
    both = (
        "SELECT family, label1, label2, label3, label4, bucket, n, latency_ms, prompt_tokens, "
        "completion_tokens, reasoning_tokens FROM metric_counts UNION ALL SELECT family, "
        "label1, label2, label3, label4, bucket, n, latency_ms, prompt_tokens, "
        "completion_tokens, reasoning_tokens FROM metric_count_changes"
    )
    found: dict[tuple[object, ...], tuple[int, ...]] = {}
    with engine.connect() as connection:
        for row in connection.exec_driver_sql(both):
            key, sums = tuple(row[:6]), tuple(int(v) for v in row[6:])
            old = found.get(key, (0,) * 5)
            found[key] = tuple(a + b for a, b in zip(old, sums, strict=True))
    return {key: sums for key, sums in found.items() if any(sums)}


def test_what_is_stored_is_counted_once_and_what_follows_by_the_triggers(
    upgraded: sa.Engine,
) -> None:
    cut = "m" * 107 + "\u2026[cut from 300 chars]"
    assert len(cut) == 128
    expected = {
        ("reviews", "translator", "", "x", "ok", 1): (1, 300, 100, 7, 0),
        ("reviews", "translator", "", "x", "ok", 11): (1, 700_000, 0, 0, 0),
        ("reviews", "translator", "", cut, "missing", -1): (1, 0, 0, 0, 0),
        ("reviews", "judge", "judge", "supplied", "ok", -1): (1, 0, 0, 0, 0),
        ("screenings", "passed", "done", "", "", -1): (1, 0, 0, 0, 0),
        ("screenings", "none", "queued", "", "", -1): (1, 0, 0, 0, 0),
        ("jobs", "queued", "", "", "", -1): (1, 0, 0, 0, 0),
    }
    assert totals(upgraded) == expected
    with upgraded.begin() as connection:
        connection.exec_driver_sql(
            f"UPDATE screenings SET status = 'done', outcome = 'flagged', updated_at = '{NOW}' "
            "WHERE id = 's2'"
        )
        connection.exec_driver_sql("UPDATE jobs SET status = 'done' WHERE screening_id = 's2'")
        connection.exec_driver_sql(review(4, usage='{"reasoning_tokens": 9}', latency=250))
    expected |= {
        ("screenings", "flagged", "done", "", "", -1): (1, 0, 0, 0, 0),
        ("jobs", "done", "", "", "", -1): (1, 0, 0, 0, 0),
        ("reviews", "translator", "", "x", "ok", 0): (1, 250, 0, 0, 9),
    }
    del expected[("screenings", "none", "queued", "", "", -1)]
    del expected[("jobs", "queued", "", "", "", -1)]
    assert totals(upgraded) == expected
