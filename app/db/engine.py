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
    scheme, rest = _split(normalize_url(_without_our_options(url)[0]))
    return f"{_SYNC_DRIVERS.get(scheme, scheme)}://{rest}"


def _without_our_options(url: str) -> tuple[str, bool]:
    """`url` without `prepared_statements=off` (ours, not the driver's), and whether it
    was there. Behind a pooler in transaction mode (PgBouncer before 1.21) a statement
    prepared on one server connection is missing on the next, so none may be prepared."""
    if "prepared_statements=" not in url:
        return url, False
    parsed = make_url(url)
    off = parsed.query.get("prepared_statements") == "off"
    return parsed.difference_update_query(["prepared_statements"]).render_as_string(
        hide_password=False
    ), off


def _sqlite_pragmas(dbapi_connection: DBAPIConnection, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets readers proceed while one writer writes; NORMAL sync is durable with WAL.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(
    url: str, *, pool_size: int = 10, max_overflow: int = 20, **kwargs: Any
) -> AsyncEngine:
    """An async engine for `url` (normalized); extra keyword arguments go to SQLAlchemy.
    On PostgreSQL it holds up to pool_size + max_overflow connections (docs/operations.md,
    Connections); `?prepared_statements=off` in the URL prepares none."""
    url, unprepared = _without_our_options(url)
    async_url = normalize_url(url)
    if async_url.startswith("sqlite"):
        engine = _create_async_engine(async_url, **kwargs)
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine
    # pre_ping: a connection the server dropped (restart, idle timeout) is replaced, not used.
    options: dict[str, Any] = {
        "pool_pre_ping": True,
        "pool_size": pool_size,
        "max_overflow": max_overflow,
    }
    connect_args: dict[str, Any] = {}
    if "connect_timeout" not in make_url(async_url).query:
        connect_args["connect_timeout"] = POSTGRES_CONNECT_TIMEOUT_SECONDS
    if unprepared:
        # psycopg prepares a statement run 5 times on a connection; asyncpg caches its own.
        # (asyncpg also wants ?prepared_statement_cache_size=0 in the URL for SQLAlchemy's.)
        asyncpg = async_url.startswith("postgresql+asyncpg")
        connect_args |= {"statement_cache_size": 0} if asyncpg else {"prepare_threshold": None}
    if connect_args:
        options["connect_args"] = connect_args
    return _create_async_engine(async_url, **(options | kwargs))


def make_session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    # Objects stay readable after the unit of work commits (e.g. to build a response).
    return async_sessionmaker(engine, expire_on_commit=False)


async def ping(engine: AsyncEngine) -> None:
    """Raises a SQLAlchemyError when the database does not answer."""
    async with engine.connect() as connection:
        await connection.execute(text("SELECT 1"))
