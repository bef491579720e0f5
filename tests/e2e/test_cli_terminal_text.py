"""Text from a provider reaches the terminal inert: a model name carrying a window-title
sequence, a clear-screen, a C1 CSI and a bidirectional override is shown by `eval run`
(text and --json) and `providers check` as visible escapes, never as the raw characters
a terminal would obey. Real processes, the scripted provider on loopback reporting that
model name, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import faithscreen
from tests.e2e.test_cli_eval import labelled_rows, rows_file
from tests.support.scripted_openai import Reply, ScriptedOpenAI
from tests.support.serve_process import provider_env

pytestmark = [pytest.mark.e2e, pytest.mark.one_database("sqlite")]

EVIL_MODEL = "\x1b]0;pwned\x07\x1b[2J\x9b2J\u202emodel"
# What a terminal obeys: ESC, BEL, CSI (C1) and the override; none may be printed raw.
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.fixture
def evil_provider() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(default=Reply(model=EVIL_MODEL)) as server:
        yield server


def assert_inert(*outputs: str) -> None:
    for output in outputs:
        found = [char for char in RAW if char in output]
        assert not found, (found, output)


def test_eval_run_shows_a_hostile_model_name_inert(
    database_url: str, evil_provider: ScriptedOpenAI, tmp_path: Path
) -> None:
    env = provider_env(evil_provider.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    rows = rows_file(tmp_path, labelled_rows())
    done = faithscreen(env, "eval", "run", str(rows))
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, done.stderr)
    assert "pwned" in done.stdout and "\\x1b" in done.stdout  # shown, as an escape

    as_json = faithscreen(env, "eval", "run", str(rows), "--name", "again", "--json")
    assert as_json.returncode == 0, as_json.stderr
    assert_inert(as_json.stdout, as_json.stderr)
    assert "pwned" in as_json.stdout
    json.loads(as_json.stdout)  # escaped inside its strings, still JSON


def test_providers_check_shows_a_hostile_model_name_inert(
    evil_provider: ScriptedOpenAI,
) -> None:
    done = faithscreen(provider_env(evil_provider.base_url), "providers", "check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_inert(done.stdout, done.stderr)
    assert "pwned" in done.stdout
