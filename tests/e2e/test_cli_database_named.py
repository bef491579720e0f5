"""Which database a command opens, said on stderr (a relative `./faithscreen.db` is
another database in another directory), and `screen` refusing rows it could not screen
before it opens or creates one. Real `faithscreen` processes, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import sqlalchemy as sa

from app.db.engine import sync_url
from app.db.location import database_location
from tests.e2e.test_cli_batch import LINES, cli_env, faithscreen, pairs_file
from tests.support.serve_process import FAITHSCREEN, StartServe

pytestmark = pytest.mark.e2e


def test_keys_create_says_which_database_file_it_writes(tmp_path: Path) -> None:
    """No FAITHSCREEN_DATABASE_URL: the file in the working directory, named absolutely."""
    done = subprocess.run(
        [FAITHSCREEN, "keys", "create", "--role", "submitter", "--name", "ci"],
        env=cli_env({}),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"faithscreen: database {tmp_path / 'faithscreen.db'}\n" in done.stderr
    assert done.stdout.splitlines()[-1].startswith("fs_")  # stdout as before: the key last


def test_a_database_url_is_named_with_its_password_masked() -> None:
    """Said before it is opened: even a database that cannot be reached is named."""
    url = "postgresql://screener:s3cret@127.0.0.1:1/faithscreen"
    done = faithscreen({}, "keys", "list", "--database-url", url)
    assert done.returncode != 0
    assert "faithscreen: database postgresql://screener:***@127.0.0.1:1/faithscreen" in done.stderr
    assert "s3cret" not in done.stderr + done.stdout


def test_serve_names_its_database_at_start(start_serve: StartServe, database_url: str) -> None:
    serve = start_serve({})
    log = serve.log.read_text()
    assert f"faithscreen: database {database_location(database_url)}" in log


def test_screen_without_a_provider_refuses_before_creating_a_database(
    empty_database_url: str, tmp_path: Path
) -> None:
    """Rows without replies and no provider: exit 2 naming the lines and what to set,
    and no database made (no SQLite file; no table in an empty PostgreSQL database)."""
    lines = [LINES[3][0], LINES[0][0], None, LINES[1][0]]  # line 1 has replies
    env = {"FAITHSCREEN_DATABASE_URL": empty_database_url}
    done = faithscreen(env, "screen", str(pairs_file(tmp_path, lines)))
    assert done.returncode == 2
    assert "lines 2, 4: replies: no LLM provider is configured: set" in done.stderr
    assert "FAITHSCREEN_TRANSLATOR_BASE_URL" in done.stderr
    assert "nothing was screened" in done.stderr
    assert "faithscreen: database" not in done.stderr  # never opened
    assert nothing_made(empty_database_url)


def nothing_made(url: str) -> bool:
    """No SQLite file (connecting would make one), or no table in the PostgreSQL database."""
    location = sa.make_url(url)
    if location.get_backend_name() == "sqlite":
        return not Path(location.database or "").exists()
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            return sa.inspect(connection).get_table_names() == []
    finally:
        engine.dispose()


def test_eval_run_without_a_provider_refuses_before_creating_a_database(
    empty_database_url: str, tmp_path: Path
) -> None:
    """`eval run` screens locally as `screen` does: the same refusal, nothing made."""
    with_replies, without = LINES[3][0], LINES[0][0]  # line 1 has replies, line 2 none
    assert with_replies is not None and without is not None
    lines = [row | {"label": "faithful"} for row in (with_replies, without)]
    env = {"FAITHSCREEN_DATABASE_URL": empty_database_url}
    done = faithscreen(env, "eval", "run", str(pairs_file(tmp_path, lines)))
    assert done.returncode == 2, done.stderr
    assert "line 2: replies: no LLM provider is configured: set" in done.stderr
    assert "faithscreen: database" not in done.stderr
    assert nothing_made(empty_database_url)


def test_mcp_on_the_embedded_database_names_it(tmp_path: Path) -> None:
    """`faithscreen mcp` without --server opens ./faithscreen.db: said on stderr (stdout is
    MCP's). Its stdin at end of file ends the server once it has started."""
    done = subprocess.run(
        [FAITHSCREEN, "mcp"],
        env=cli_env({}),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert f"faithscreen: database {tmp_path / 'faithscreen.db'}\n" in done.stderr
    assert "faithscreen: database" not in done.stdout
