"""The engine: URL handling, SQLite connection settings, UTC timestamps on every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.db.engine import create_engine, normalize_url, ping, sync_url
from app.models import Job, PairRow, Screening


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///faithscreen.db", "sqlite+aiosqlite:///faithscreen.db"),
        ("sqlite:////abs/path.db", "sqlite+aiosqlite:////abs/path.db"),
        ("postgresql://u:p%40ss@h:5432/db", "postgresql+psycopg://u:p%40ss@h:5432/db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("sqlite+aiosqlite:///x.db", "sqlite+aiosqlite:///x.db"),
    ],
)
def test_normalize_url_picks_async_driver_unless_one_is_named(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///faithscreen.db", "sqlite:///faithscreen.db"),
        ("sqlite+aiosqlite:///x.db", "sqlite:///x.db"),
        ("postgres://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+psycopg://u@h/db"),
    ],
)
def test_sync_url_picks_sync_driver(url: str, expected: str) -> None:
    assert sync_url(url) == expected


@pytest.mark.parametrize("url", ["faithscreen.db", "", "://nothing"])
def test_a_url_without_scheme_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="not a database URL"):
        normalize_url(url)


async def test_sqlite_connections_use_wal_busy_timeout_and_foreign_keys(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        async with engine.connect() as connection:
            pragma = {
                name: (await connection.exec_driver_sql(f"PRAGMA {name}")).scalar_one()
                for name in ("journal_mode", "busy_timeout", "foreign_keys")
            }
    finally:
        await engine.dispose()
    assert pragma == {"journal_mode": "wal", "busy_timeout": 30_000, "foreign_keys": 1}


async def test_foreign_keys_are_enforced(session: AsyncSession) -> None:
    session.add(Screening(pair_id=999_999, external_id=None, batch_id=None, confirmations=0))
    with pytest.raises(IntegrityError):
        await session.flush()


async def test_ping_answers(engine: AsyncEngine) -> None:
    await ping(engine)


async def test_timestamps_come_back_as_the_same_aware_utc_instant(session: AsyncSession) -> None:
    pair = PairRow(content_hash="a" * 64, informal="i", formal="f", header="")
    session.add(pair)
    await session.flush()
    screening = Screening(pair_id=pair.id, external_id=None, batch_id=None, confirmations=0)
    session.add(screening)
    await session.flush()
    # Written in another zone, read back as UTC: the same instant, to the microsecond.
    later = datetime(2030, 5, 6, 7, 8, 9, 123456, tzinfo=timezone(timedelta(hours=5)))
    session.add(Job(screening_id=screening.id, run_after=later))
    await session.flush()
    session.expunge_all()
    stored = (await session.execute(sa.select(Job))).scalar_one()
    assert stored.run_after == later
    assert stored.run_after.tzinfo == UTC
    assert stored.created_at.tzinfo == UTC


async def test_a_naive_datetime_is_refused(session: AsyncSession) -> None:
    session.add(PairRow(content_hash="b" * 64, informal="i", formal="f", created_at=datetime.now()))
    with pytest.raises(StatementError, match="naive datetime"):
        await session.flush()
