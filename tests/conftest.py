"""Shared fixtures. Each section below is owned by one part of the project: add yours as a
new section rather than editing another's."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from psycopg import sql
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.db.engine import create_engine, make_session_factory
from app.db.migrate import upgrade_to_head
from app.models import metadata
from app.settings import get_settings
from tests.support.clock import MovableClock

# =========================================================================================
# Storage (app/db, app/models, app/repositories): databases brought to head by the real
# migrations, on SQLite and PostgreSQL.
#
#   database_url      parametrized over sqlite / postgres (marked `postgres`); a fresh
#                     SQLite file per test, or the session's PostgreSQL database emptied
#   engine            an AsyncEngine on database_url (disposed after the test)
#   session_factory   async_sessionmaker on engine
#   session           one AsyncSession (nothing committed unless the test commits)
#   postgres_server_url / postgres_database_url / new_postgres_database: PostgreSQL only
# =========================================================================================

POSTGRES_URL_ENV = "FAITHSCREEN_TEST_POSTGRES_URL"
DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test"


def libpq_url(url: str) -> str:
    """The URL psycopg.connect takes: no `+driver` in the scheme."""
    scheme, sep, rest = url.partition("://")
    return scheme.split("+")[0] + sep + rest


def with_database(url: str, name: str) -> str:
    return make_url(url).set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def postgres_server_url() -> str:
    """The PostgreSQL server to test against. Configured and unreachable: the tests fail.
    Not configured and the default unreachable: they are skipped."""
    configured = os.environ.get(POSTGRES_URL_ENV)
    url = configured or DEFAULT_POSTGRES_URL
    try:
        # Generous: a server that is down refuses at once, and a slow answer on a loaded
        # machine must not skip every PostgreSQL test.
        with psycopg.connect(libpq_url(url), connect_timeout=30):
            pass
    except psycopg.OperationalError as error:
        if configured:
            pytest.fail(f"{POSTGRES_URL_ENV}={configured}, but it does not answer: {error}")
        pytest.skip(f"no PostgreSQL at {url} (set {POSTGRES_URL_ENV} to require one): {error}")
    return url


def create_database(server_url: str) -> str:
    name = f"faithscreen_test_{secrets.token_hex(6)}"
    with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
        connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return with_database(server_url, name)


def drop_database(server_url: str, database_url: str) -> None:
    name = make_url(database_url).database or ""
    statement = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
        connection.execute(statement)


@pytest.fixture(scope="session")
def postgres_database_url(postgres_server_url: str) -> Iterator[str]:
    """One database for the test session, migrated to head, dropped at the end."""
    url = create_database(postgres_server_url)
    try:
        upgrade_to_head(url)
        yield url
    finally:
        drop_database(postgres_server_url, url)


@pytest.fixture
def new_postgres_database(postgres_server_url: str) -> Iterator[str]:
    """An empty PostgreSQL database of its own (no migrations), dropped after the test."""
    url = create_database(postgres_server_url)
    try:
        yield url
    finally:
        drop_database(postgres_server_url, url)


def empty_all(url: str) -> None:
    """Empty every table between tests, and restart the sequences. Append-only tables
    refuse deletes by trigger; a superuser may switch triggers (foreign keys' too) off for
    its transaction, which is what this does. DELETE, not TRUNCATE: on tables of a few
    rows it takes a quarter of the time (TRUNCATE makes and syncs new files for every
    table and index), and it runs before every PostgreSQL test."""
    tables = [sql.Identifier(t.name) for t in reversed(metadata.sorted_tables)]
    with psycopg.connect(libpq_url(url)) as connection:
        connection.execute("SET LOCAL session_replication_role = replica")
        for table in tables:
            connection.execute(sql.SQL("DELETE FROM {}").format(table))
        sequences = connection.execute(
            "SELECT quote_ident(sequence_schema) || '.' || quote_ident(sequence_name)"
            " FROM information_schema.sequences"
        ).fetchall()
        for (sequence,) in sequences:
            connection.execute(sql.SQL("ALTER SEQUENCE {} RESTART").format(sql.SQL(sequence)))


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite file migrated to head once; each test gets a copy (faster than migrating)."""
    path = tmp_path_factory.mktemp("sqlite-template") / "faithscreen.db"
    upgrade_to_head(f"sqlite:///{path}")
    return path


# Each test that takes a database runs once on each kind (PostgreSQL only where set up),
# except in a module marked `one_database("sqlite")` or `("postgres")`: an end-to-end or
# browser test whose subject is a command, a page or a client, not what the database does
# (that is tested on both kinds below them), runs on the kind named (docs/development.md).
BOTH_DATABASES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]
KINDS = ("sqlite", "postgres")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect a `one_database` test's run on the other kind of database. A kind it does
    not know is refused: it would deselect the test on both."""
    kept, dropped = [], []
    for item in items:
        marker = item.get_closest_marker("one_database")
        if marker is not None and marker.args[:1] not in [(kind,) for kind in KINDS]:
            raise pytest.UsageError(f"{item.nodeid}: one_database takes one of {KINDS}")
        params = getattr(item, "callspec", None)
        kind = params.params.get("database_url") if params is not None else None
        if marker is not None and kind is not None and kind != marker.args[0]:
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(params=BOTH_DATABASES)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        path = tmp_path / "faithscreen.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        return f"sqlite:///{path}"
    url: str = request.getfixturevalue("postgres_database_url")
    empty_all(url)
    return url


@pytest.fixture(params=BOTH_DATABASES)
def empty_database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of each kind with no tables yet: for tests of the migrations themselves."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'empty.db'}"
    url: str = request.getfixturevalue("new_postgres_database")
    return url


@pytest.fixture
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    yield engine
    await engine.dispose()


@pytest.fixture
def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return make_session_factory(engine)


@pytest.fixture
async def session(
    session_factory: async_sessionmaker[AsyncSession],
) -> AsyncIterator[AsyncSession]:
    async with session_factory() as session:
        yield session


# ======================================= end of storage ==================================


# =========================================================================================
# Settings (app/settings.py): `get_settings()` is cached for the life of a process. A CLI
# command run in-process by one test must not hand its settings to the next test's.
# =========================================================================================


@pytest.fixture(autouse=True)
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No FAITHSCREEN_* variable of the developer's shell leaks into the settings under test
    (the test-only ones, which name the PostgreSQL server, stay)."""
    for name in os.environ:
        if name.startswith("FAITHSCREEN_") and not name.startswith("FAITHSCREEN_TEST_"):
            monkeypatch.delenv(name)


# =========================================================================================
# Time (app/clock.py): a test that needs time to pass moves the application's clock instead
# of sleeping, so a loaded machine cannot make a lease lapse early or late.
# =========================================================================================


# Hypothesis times each example (200 ms by default) and fails a slow data generation: both
# measure the machine, not the code, so neither applies here. Loaded at import, before any
# test module builds its own @settings on top of the default.
hypothesis_settings.register_profile(
    "faithscreen", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.load_profile("faithscreen")


@pytest.fixture
def moved_clock() -> Iterator[MovableClock]:
    moved = MovableClock()
    yield moved
    moved.reset()
