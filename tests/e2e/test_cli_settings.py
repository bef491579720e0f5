"""A bad FAITHSCREEN_* value, and an unknown FAITHSCREEN_* name, as each command meets them:
`faithscreen` processes of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import LINES, faithscreen, pairs_file

pytestmark = pytest.mark.e2e

CONFIRMATIONS = (
    "faithscreen: FAITHSCREEN_CONFIRMATIONS='abc' is not accepted: "
    "it takes a whole number from 0 to 5"
)


def commands(tmp_path: Path) -> list[list[str]]:
    labelled = (LINES[3][0] or {}) | {"label": "faithful"}  # supplied replies
    pairs = str(pairs_file(tmp_path, [labelled]))
    return [
        ["config"],
        ["serve", "--port", "1"],
        ["worker"],
        ["screen", pairs],
        ["eval", "run", pairs],
        ["db", "upgrade"],
        ["report"],
        ["rescore", "--all"],
        ["providers", "check"],
    ]


def test_a_bad_value_is_one_line_naming_the_variable_for_every_command(
    tmp_path: Path,
) -> None:
    env = {
        "FAITHSCREEN_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
        "FAITHSCREEN_CONFIRMATIONS": "abc",
    }
    for command in commands(tmp_path):
        done = faithscreen(env, *command, timeout=180)
        assert (done.returncode, done.stderr.splitlines()) == (2, [CONFIRMATIONS]), command
        assert done.stdout == "", command
    assert not (tmp_path / "x.db").exists()  # refused before anything was touched


def test_every_bad_value_gets_its_own_line() -> None:
    env = {
        "FAITHSCREEN_CONFIRMATIONS": "abc",
        "FAITHSCREEN_JUDGE_MAX_TOKENS": "0",
        "FAITHSCREEN_AUTH": "maybe",
        "FAITHSCREEN_TRANSLATOR_TEMPERATURE": "hot",
        "FAITHSCREEN_JUDGE_API_KEY": "sk-not-shown",
    }
    done = faithscreen(env, "config")
    assert done.returncode == 2
    assert sorted(done.stderr.splitlines()) == [
        "faithscreen: FAITHSCREEN_AUTH='maybe' is not accepted: it takes one of on, off",
        CONFIRMATIONS,
        "faithscreen: FAITHSCREEN_JUDGE_MAX_TOKENS='0' is not accepted: "
        "it takes a whole number of at least 1",
        "faithscreen: FAITHSCREEN_TRANSLATOR_TEMPERATURE='hot' is not accepted: "
        "it takes a number from 0 to 2",
    ]


def test_an_unknown_name_is_warned_about_with_the_closest_known_one() -> None:
    env = {
        "FAITHSCREEN_TRANSLATER_MODEL": "gpt-4.1",
        # Names that are read, though not all by the settings: no warning.
        "FAITHSCREEN_TRANSLATOR_MODEL": "gpt-4.1",
        "FAITHSCREEN_API_KEY": "fs_key",
        "FAITHSCREEN_MIGRATIONS_DIR": str(Path(__file__).parents[2] / "migrations"),
        "FAITHSCREEN_TEST_POSTGRES_URL": "postgresql://postgres@127.0.0.1:5432/test",
        "FAITHSCREEN_JUDGE": '{"model": "o4-mini"}',
    }
    done = faithscreen(env, "config")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "faithscreen: warning: FAITHSCREEN_TRANSLATER_MODEL is not a FaithScreen setting and "
        "is ignored; did you mean FAITHSCREEN_TRANSLATOR_MODEL?"
    ]
    assert '"model": "o4-mini"' in done.stdout
