"""Failures are loud: `screen`, `submit --wait` and `eval run` as processes of their own end
with one line per failure cause, and exit 3 when every screening that needed a provider
ended in a provider error (a typo in a base URL must not quietly fill the review queue).
A real `faithscreen serve` for `submit`; on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import FAITHFUL, INFORMAL, JUDGE_MISMATCH, faithscreen, formal
from tests.e2e.test_cli_batch import pairs_file as write_pairs
from tests.e2e.test_cli_eval import labelled_rows, rows_file
from tests.support.scripted_openai import HttpError, ScriptedOpenAI
from tests.support.serve_process import StartServe, free_port, provider_env

pytestmark = pytest.mark.one_database("postgres")

EXIT_PROVIDERS_FAILED = 3
LINE = re.compile(r"^\d+ of \d+ screenings: \w+ — .+$")


def closed_port_env(**overrides: str) -> dict[str, str]:
    """Both roles at a loopback port nothing listens on, with no transport retries."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    no_retries = {f"FAITHSCREEN_{role}_MAX_RETRIES": "0" for role in ("TRANSLATOR", "JUDGE")}
    return provider_env(url, **no_retries, **overrides)


def three_pairs(tmp_path: Path) -> Path:
    """Two pairs for the providers, one with supplied replies (it needs no provider)."""
    supplied = {"translator": FAITHFUL, "judge": JUDGE_MISMATCH}
    return write_pairs(
        tmp_path,
        [
            {"informal": INFORMAL, "formal": formal("loud_one"), "external_id": "one"},
            {"informal": INFORMAL, "formal": formal("loud_two"), "external_id": "two"},
            {"informal": INFORMAL, "formal": formal("loud_3"), "replies": supplied},
        ],
    )


def failure_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if LINE.match(line)]


def check_closed_port_lines(stderr: str, url: str) -> None:
    lines = failure_lines(stderr)
    assert len(lines) == 2, stderr  # one cause per role
    by_reason = sorted(lines, key=lambda line: line.split()[4])
    for role, line in zip(("judge", "translator"), by_reason, strict=True):
        assert line.startswith(f"2 of 3 screenings: {role}_provider_error — connection error")
        assert f"(at {url})" in line, line
    assert "nothing was screened" in stderr and "faithscreen providers check" in stderr


def test_screen_with_an_unreachable_provider_says_why_and_exits_3(
    database_url: str, tmp_path: Path
) -> None:
    env = closed_port_env(FAITHSCREEN_DATABASE_URL=database_url)
    out = tmp_path / "results.jsonl"
    done = faithscreen(env, "screen", str(three_pairs(tmp_path)), "--out", str(out))
    assert done.returncode == EXIT_PROVIDERS_FAILED, done.stderr
    check_closed_port_lines(done.stderr, env["FAITHSCREEN_TRANSLATOR_BASE_URL"])
    assert "Traceback" not in done.stderr
    # The results are still written: every pair has its (needs_review) outcome.
    outcomes = [json.loads(line)["outcome"] for line in out.read_text().splitlines()]
    assert outcomes == ["needs_review", "needs_review", "flagged"]


def test_submit_wait_prints_the_same_lines_as_screen_and_exits_3(
    start_serve: StartServe, database_url: str, tmp_path: Path
) -> None:
    env = closed_port_env()
    serve = start_serve(env)
    pairs = three_pairs(tmp_path)
    args = ["--server", serve.base_url, "--wait", "--poll-seconds", "0.2"]
    submitted = faithscreen({}, "submit", str(pairs), *args)
    assert submitted.returncode == EXIT_PROVIDERS_FAILED, submitted.stderr
    check_closed_port_lines(submitted.stderr, env["FAITHSCREEN_TRANSLATOR_BASE_URL"])

    # `screen` on the same providers prints the very same lines.
    other = tmp_path / "other"
    other.mkdir()
    screened = faithscreen(
        env | {"FAITHSCREEN_DATABASE_URL": f"sqlite:///{other / 'x.db'}"}, "screen", str(pairs)
    )
    assert screened.returncode == EXIT_PROVIDERS_FAILED, screened.stderr
    assert failure_lines(screened.stderr) == failure_lines(submitted.stderr)


def test_some_failed_calls_are_listed_but_the_run_succeeds(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script("loud_two", model="judge-model", steps=[HttpError(500, "overloaded")])
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_JUDGE_MAX_RETRIES="0",
    )
    done = faithscreen(env, "screen", str(three_pairs(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert failure_lines(done.stderr) == [
        "1 of 3 screenings: judge_provider_error — HTTP 500: overloaded "
        f"(at {scripted_openai.base_url})"
    ]


def test_eval_run_with_an_unreachable_provider_exits_3(database_url: str, tmp_path: Path) -> None:
    env = closed_port_env(FAITHSCREEN_DATABASE_URL=database_url)
    rows = labelled_rows()
    done = faithscreen(env, "eval", "run", str(rows_file(tmp_path, rows)), "--json")
    assert done.returncode == EXIT_PROVIDERS_FAILED, done.stderr
    assert json.loads(done.stdout)["labelled"] == len(rows)  # still printed
    lines = failure_lines(done.stderr)
    assert {line.split(" — ")[0] for line in lines} == {
        f"{len(rows)} of {len(rows)} screenings: translator_provider_error",
        f"{len(rows)} of {len(rows)} screenings: judge_provider_error",
    }
