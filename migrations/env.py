"""Alembic environment: runs migrations on a synchronous connection.

The URL comes from the Alembic config (`app.db.migrate` sets it), or else from the
application settings, so the `alembic` command line works too.
"""

from __future__ import annotations

from logging.config import fileConfig
from typing import Any, Literal

import sqlalchemy as sa
from alembic import context
from alembic.autogenerate.api import AutogenContext

from app.db.engine import sync_url
from app.db.types import StrEnumType, UTCDateTime
from app.models import metadata
from app.settings import get_settings

# An arbitrary constant naming FaithScreen's migration lock among PostgreSQL advisory locks.
LOCK_KEY = 0x46535F4D49475254

config = context.config
if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def database_url() -> str:
    return config.get_main_option("sqlalchemy.url") or sync_url(get_settings().database_url)


def render_item(kind: str, obj: Any, _autogen_context: AutogenContext) -> str | Literal[False]:
    """Autogenerate writes our column types as plain SQLAlchemy ones: a migration must not
    depend on application code that may change after it was written."""
    if kind == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if kind == "type" and isinstance(obj, StrEnumType):
        return f"sa.String(length={obj.length})"
    return False


def run_offline() -> None:
    url = database_url()
    context.configure(
        url=url,
        target_metadata=metadata,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    # NullPool: a migration run is one connection, closed when done.
    engine = sa.create_engine(database_url(), poolclass=sa.NullPool)
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=metadata,
            # SQLite cannot ALTER most things: batch mode copies the table instead.
            render_as_batch=connection.dialect.name == "sqlite",
            render_item=render_item,
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Several `serve` replicas may start at once: one migrates, the others
                # wait here and then find the schema already at head.
                connection.execute(sa.text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
