"""What a new user trips over in the first hour, each on the path they took: real
`faithscreen` processes (`serve`, `screen`, `submit`, `eval run`, `config`, `--help`)."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from app.cli import cli
from tests.e2e.test_cli_batch import (
    LINES,
    check_results,
    faithscreen,
    pairs_file,
    script,
    stored_screenings,
)
from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import provider_env

pytestmark = [pytest.mark.e2e, pytest.mark.one_database("sqlite")]


def test_serve_on_a_port_in_use_is_one_line_and_exit_1_with_nothing_started(
    tmp_path: Path,
) -> None:
    database = tmp_path / "never-made.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {"FAITHSCREEN_DATABASE_URL": f"sqlite:///{database}"}
        done = faithscreen(env, "serve", "--host", "127.0.0.1", "--port", str(port), timeout=180)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert f"port {port}" in line and "--port" in line, line
    assert done.stdout == ""  # no first admin key announced
    assert not database.exists()  # no migration ran


def test_screen_run_twice_prints_the_earlier_results_and_again_screens_anew(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    script(scripted_openai)
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    path = pairs_file(tmp_path, [line for line, _ in LINES])
    first = faithscreen(env, "screen", str(path))
    assert first.returncode == 0, first.stderr
    check_results(first.stdout)
    asked = len(scripted_openai.requests)

    second = faithscreen(env, "screen", str(path))
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout  # the same screenings, ids and all
    assert "submitted before as batch" in second.stderr and "--again" in second.stderr
    assert len(scripted_openai.requests) == asked
    assert stored_screenings(database_url) == 4

    script(scripted_openai)  # the scripted steps were used up by the first run
    anew = faithscreen(env, "screen", str(path), "--again")
    assert anew.returncode == 0, anew.stderr
    check_results(anew.stdout)
    assert "submitted before" not in anew.stderr
    assert len(scripted_openai.requests) > asked
    assert stored_screenings(database_url) == 8


def command_paths() -> list[list[str]]:
    """Every command and sub-command of `faithscreen`, as the words that name it."""
    paths: list[list[str]] = []

    # Any: typer builds its commands with a click of its own, not importable in public.
    # Asked through list_commands/get_command, as click asks: `faithscreen` loads a
    # command's module only then (app/cli/root.py), so `.commands` alone would list only
    # what this process happened to import before.
    def walk(command: Any, path: list[str]) -> None:
        paths.append(path)
        if hasattr(command, "list_commands"):
            for name in command.list_commands(None):
                walk(command.get_command(None, name), [*path, name])

    walk(typer.main.get_command(cli), [])
    return paths


def test_every_flag_of_every_command_shows_in_help_as_a_plain_flag() -> None:
    """Every command's help, rendered in this process by the same click commands the
    `faithscreen` script runs (a process each would spend minutes importing the same
    modules); the real script's help is read once, for `submit`."""
    paths = command_paths()
    assert ["submit"] in paths and ["keys", "create"] in paths and ["eval", "run"] in paths
    runner = CliRunner()
    for path in paths:
        done = runner.invoke(cli, [*path, "--help"], env={"COLUMNS": "100"})
        assert done.exit_code == 0, (path, done.output)
        assert "--help" in done.output, path
        assert "<bool>" not in done.output, (path, done.output)
    help_text = faithscreen({}, "submit", "--help").stdout
    assert "<bool>" not in help_text, help_text
    assert any(
        line.split() == ["--wait", "Wait,", "showing", "progress."]
        for line in help_text.splitlines()
    ), help_text


@pytest.mark.parametrize(
    ("env", "capacity"),
    [
        ({}, 32),  # 0: twice the default FAITHSCREEN_LLM_CONCURRENCY of 16
        ({"FAITHSCREEN_LLM_CONCURRENCY": "5"}, 10),
        ({"FAITHSCREEN_WORKER_CAPACITY": "7"}, 7),
    ],
)
def test_config_shows_effective_values(env: dict[str, str], capacity: int) -> None:
    done = faithscreen(env, "config")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["worker_capacity"] == capacity


def test_rows_keep_their_request_fields_and_the_ignored_ones_are_named_once(
    database_url: str, tmp_path: Path
) -> None:
    # Supplied replies: decided at intake, no provider needed.
    supplied = {k: v for k, v in (LINES[3][0] or {}).items() if k != "external_id"}
    rows = [
        supplied | {"id": "ignored-id", "external_id": "kept", "why": "a note"},
        supplied | {"id": "from-id", "source": "miniF2F", "why": "another", "repo": "r"},
    ]
    env = {"FAITHSCREEN_DATABASE_URL": database_url}
    done = faithscreen(env, "screen", str(pairs_file(tmp_path, rows)))
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["external_id"] for r in results] == ["kept", "from-id"]
    [line] = [line for line in done.stderr.splitlines() if "ignored" in line]
    assert "id (1 row)" in line and "why (2 rows)" in line and "repo (1 row)" in line, line
    assert "source" not in line.split("has:")[-1]
