"""A throwaway database for one benchmark run: a SQLite file in `workdir`, or a fresh
PostgreSQL database on the server of `postgres_url`, dropped afterwards. Imported by the
benchmarks beside it (run as scripts, so this folder is on sys.path)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import psycopg
from psycopg import sql
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.engine import create_engine, make_session_factory


@contextmanager
def fresh_database(kind: str, postgres_url: str, workdir: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite:///{workdir / f'{secrets.token_hex(4)}.db'}"
        return
    name = f"faithscreen_bench_{secrets.token_hex(4)}"
    admin_url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        try:
            yield admin_url.rsplit("/", 1)[0] + "/" + name
        finally:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


@asynccontextmanager
async def session_factory(url: str) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    """The service's own sessions on `url`, its engine disposed of afterwards."""
    engine = create_engine(url)
    try:
        yield make_session_factory(engine)
    finally:
        await engine.dispose()
