"""The async engine and session factory, for SQLite (the default) and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event, make_url, text
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.asyncio import create_async_engine as _create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

# A bare scheme picks our driver; a scheme naming its driver ("postgresql+asyncpg") is kept.
_ASYNC_DRIVERS = {
    "sqlite": "sqlite+aiosqlite",
    "postgresql": "postgresql+psycopg",
    "postgres": "postgresql+psycopg",
}
# Alembic runs synchronously; psycopg 3 speaks both ways, aiosqlite only async.
_SYNC_DRIVERS = {
    "sqlite+aiosqlite": "sqlite",
    "postgresql+asyncpg": "postgresql+psycopg",
}
# Writers on SQLite queue for the file lock instead of failing at once.
SQLITE_BUSY_TIMEOUT_MS = 30_000
# A PostgreSQL server that does not answer (host down, packets dropped) fails a new
# connection after this long, so a request answers 503 instead of hanging for psycopg's
# default of 130 s. A connect_timeout in the URL wins.
POSTGRES_CONNECT_TIMEOUT_SECONDS = 5


def _split(url: str) -> tuple[str, str]:
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        # Not the value itself: a URL this malformed may still hold a password.
        raise ValueError(
            "not a database URL: expected scheme://..., such as sqlite:///faithscreen.db "
            "or postgresql://user:password@host:5432/db"
        )
    return scheme, rest


def normalize_url(url: str) -> str:
    """The async URL for `url`: `sqlite:///x.db` -> `sqlite+aiosqlite:///x.db`, etc."""
    scheme, rest = _split(url)
    return f"{_ASYNC_DRIVERS.get(scheme, scheme)}://{rest}"


def sync_url(url: str) -> str:
    """The synchronous URL for `url` (for Alembic): `sqlite:///...`, `postgresql+psycopg://...`."""
    scheme, rest = _split(normalize_url(url))
    return f"{_SYNC_DRIVERS.get(scheme, scheme)}://{rest}"


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers proceed while one writer writes; NORMAL sync is durable with WAL.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An async engine for `url` (normalized); extra keyword arguments go to SQLAlchemy."""
    async_url = normalize_url(url)
    if async_url.startswith("sqlite"):
        engine = _create_async_engine(async_url, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    # pre_ping: a connection the server dropped (restart, idle timeout) is replaced, not used.
    options: dict[str, Any] = {"pool_pre_ping": True, "pool_size": 10, "max_overflow": 20}
    if "connect_timeout" not in make_url(async_url).query:
        options["connect_args"] = {"connect_timeout": POSTGRES_CONNECT_TIMEOUT_SECONDS}
    return _create_async_engine(async_url, **(options | kwargs))


def make_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    # Objects stay readable after the unit of work commits (e.g. to build a response).
    return async_sessionmaker(engine, expire_on_commit=False)


async def ping(engine: AsyncEngine) -> None:
    """Raises a SQLAlchemyError when the database does not answer."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
