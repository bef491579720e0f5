"""Applying the Alembic migrations in `migrations/` programmatically (sync).

The folder sits at the repository root, next to the `app` package; set
FAITHSCREEN_MIGRATIONS_DIR where the package is installed without the repository.
"""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.ext.asyncio import AsyncEngine

import app
from app.db.engine import sync_url
from app.settings import MIGRATIONS_DIR_ENV


def migrations_dir() -> Path:
    override = os.environ.get(MIGRATIONS_DIR_ENV)
    if override:
        return Path(override)
    return Path(app.__file__).resolve().parent.parent / "migrations"


def alembic_config(url: str) -> Config:
    """An Alembic config for `url`, with no alembic.ini needed."""
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # ConfigParser interpolates '%': a percent-encoded password must be escaped.
    config.set_main_option("sqlalchemy.url", sync_url(url).replace("%", "%%"))
    return config


def upgrade_to_head(url: str) -> None:
    """Apply every migration not yet applied to the database at `url` (creating SQLite files)."""
    command.upgrade(alembic_config(url), "head")


def head_revision() -> str | None:
    return ScriptDirectory(str(migrations_dir())).get_current_head()


def current_revision(url: str) -> str | None:
    """The revision the database at `url` is at; None for an empty database."""
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            return _revision_on(connection)
    finally:
        engine.dispose()


def check_at_head(url: str) -> bool:
    return current_revision(url) == head_revision()


async def revision_of(engine: AsyncEngine) -> str | None:
    """The revision of the database behind `engine` (None for an empty database), read
    through that engine's pool: a readiness probe must not build an engine per call."""
    async with engine.connect() as connection:
        return await connection.run_sync(_revision_on)


def _revision_on(connection: sa.Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()
