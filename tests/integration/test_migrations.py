"""The migrations build exactly the schema the models describe, on both databases."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app.db.engine import sync_url
from app.db.migrate import (
    MIGRATIONS_DIR_ENV,
    alembic_config,
    check_at_head,
    current_revision,
    head_revision,
    migrations_dir,
    upgrade_to_head,
)
from app.models import metadata

VERSIONS = migrations_dir() / "versions"


def schema_differences(url: str) -> list[object]:
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return list(compare_metadata(context, metadata))
    finally:
        engine.dispose()


def test_an_empty_database_upgraded_to_head_matches_the_models(empty_database_url: str) -> None:
    assert current_revision(empty_database_url) is None
    upgrade_to_head(empty_database_url)
    assert current_revision(empty_database_url) == head_revision()
    assert check_at_head(empty_database_url)
    assert schema_differences(empty_database_url) == []


def test_the_comparison_sees_a_schema_that_differs(empty_database_url: str) -> None:
    # The test above can only fail if the comparison notices differences at all.
    upgrade_to_head(empty_database_url)
    engine = sa.create_engine(sync_url(empty_database_url), poolclass=sa.NullPool)
    with engine.begin() as connection:
        connection.exec_driver_sql("DROP INDEX ix_screenings_outcome")
    engine.dispose()
    assert schema_differences(empty_database_url) != []


def test_upgrading_twice_is_harmless_and_downgrade_undoes_everything(
    empty_database_url: str,
) -> None:
    upgrade_to_head(empty_database_url)
    upgrade_to_head(empty_database_url)
    command.downgrade(alembic_config(empty_database_url), "base")
    engine = sa.create_engine(sync_url(empty_database_url), poolclass=sa.NullPool)
    with engine.connect() as connection:
        left = set(sa.inspect(connection).get_table_names()) - {"alembic_version"}
    engine.dispose()
    assert left == set()
    upgrade_to_head(empty_database_url)
    assert schema_differences(empty_database_url) == []


def test_migration_files_are_date_prefixed_and_say_why_first() -> None:
    files = sorted(VERSIONS.glob("*.py"))
    assert files
    for path in files:
        assert re.fullmatch(r"\d{4}_\d{2}_\d{2}_\d{4}_\w+\.py", path.name), path.name
        first_line = path.read_text(encoding="utf-8").splitlines()[0]
        assert re.fullmatch(r"# \S.{10,}", first_line), f"{path.name}: {first_line!r}"


def test_the_migrations_folder_can_be_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "elsewhere"
    shutil.copytree(migrations_dir(), moved)
    monkeypatch.setenv(MIGRATIONS_DIR_ENV, str(moved))
    assert migrations_dir() == moved
    url = f"sqlite:///{tmp_path / 'moved.db'}"
    upgrade_to_head(url)
    assert check_at_head(url)


def faithscreen_command() -> list[str]:
    script = Path(sys.executable).with_name("faithscreen")
    return (
        [str(script)]
        if script.exists()
        else [sys.executable, "-c", "import app.cli as c; c.main()"]
    )


def test_db_upgrade_command_migrates_a_fresh_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "cli.db"
    env = os.environ | {"FAITHSCREEN_DATABASE_URL": "sqlite:///ignored-by-the-option.db"}
    done = subprocess.run(
        [*faithscreen_command(), "db", "upgrade", "--database-url", f"sqlite:///{path}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"at revision {head_revision()} (head)" in done.stdout
    assert check_at_head(f"sqlite:///{path}")
    assert not (tmp_path / "ignored-by-the-option.db").exists()


def test_db_upgrade_command_defaults_to_the_configured_database(tmp_path: Path) -> None:
    path = tmp_path / "configured.db"
    env = os.environ | {"FAITHSCREEN_DATABASE_URL": f"sqlite:///{path}"}
    done = subprocess.run(
        [*faithscreen_command(), "db", "upgrade"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert check_at_head(f"sqlite:///{path}")
