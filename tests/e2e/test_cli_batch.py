"""`faithscreen submit` against a real `faithscreen serve`, and `faithscreen screen` as a
process of its own, both with the scripted provider on loopback, on SQLite and PostgreSQL.

One pairs file mixes the two line shapes (a request, a shared-data row), a blank line,
supplied replies and pairs the provider flags or cannot answer readably, so the results
show outcomes in input order and every index mapped to its item.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from app.db.engine import sync_url
from tests.support.scripted_openai import Hang, Reply, ScriptedOpenAI, contract_reply
from tests.support.serve_process import FAITHSCREEN, StartServe, db_rows, provider_env

pytestmark = [pytest.mark.e2e, pytest.mark.one_database("sqlite")]

FAITHFUL = contract_reply("FAITHFUL")
JUDGE_MISMATCH = contract_reply("MISMATCH", back_translation=None, issues="n is dropped")


def formal(marker: str) -> str:
    return f"theorem {marker} (n : ℕ) : n + 0 = n := by sorry"


INFORMAL = "For every natural number n, n + 0 = n."
# (line, expected outcome); the blank line 3 is no item.
LINES: list[tuple[dict[str, Any] | None, str]] = [
    ({"informal": INFORMAL, "formal": formal("cli_pass"), "external_id": "one"}, "passed"),
    (
        {
            "id": "shared/two",
            "source": "miniF2F-lean4",
            "informal": INFORMAL,
            "formal": formal("cli_flag"),
            "header": "import Mathlib",
            "repo": "yangky11/miniF2F-lean4",
            "informal_proof": None,
        },
        "flagged",
    ),
    (None, ""),
    (
        {
            "informal": INFORMAL,
            "formal": formal("cli_supplied"),
            "external_id": "three",
            "replies": {"translator": FAITHFUL, "judge": JUDGE_MISMATCH},
        },
        "flagged",
    ),
    ({"informal": INFORMAL, "formal": formal("cli_unreadable"), "external_id": "four"}, ""),
]
EXPECTED = [
    ("one", "passed", []),
    ("shared/two", "flagged", ["judge_mismatch"]),
    ("three", "flagged", ["judge_mismatch"]),
    ("four", "needs_review", ["translator_missing"]),
]


def script(server: ScriptedOpenAI) -> None:
    server.script("cli_flag", model="judge-model", steps=[Reply(JUDGE_MISMATCH)])
    never_readable = [Reply("Looks right to me.")] * 3  # the review and two format retries
    server.script("cli_unreadable", model="translator-model", steps=never_readable)


def pairs_file(tmp_path: Path, lines: list[dict[str, Any] | None], name: str = "p") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(("" if ln is None else json.dumps(ln)) + "\n" for ln in lines))
    return path


def cli_env(env: dict[str, str]) -> dict[str, str]:
    """This environment without the developer's FAITHSCREEN_* settings, plus `env`."""
    return {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")} | env


def faithscreen(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [FAITHSCREEN, *args], env=cli_env(env), capture_output=True, text=True, timeout=timeout
    )


def check_results(text: str) -> None:
    rows = [json.loads(line) for line in text.splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2, 3]
    assert [r["line"] for r in rows] == [1, 2, 4, 5]  # line 3 is blank
    seen = [(r["external_id"], r["outcome"], r["reasons"]) for r in rows]
    assert [(e, o) for e, o, _ in seen] == [(e, o) for e, o, _ in EXPECTED]
    for (_, _, reasons), (_, _, expected) in zip(seen, EXPECTED, strict=True):
        assert set(expected) <= set(reasons)
    assert {r["status"] for r in rows} == {"done"}
    assert len({r["id"] for r in rows}) == 4


def check_progress(stderr: str, total: int) -> None:
    """Not a terminal: plain lines, the last one complete, no control codes."""
    lines = [line for line in stderr.splitlines() if f"/{total} (" in line]
    assert lines, stderr
    assert f"{total}/{total} (100.0%)" in lines[-1]
    assert "passed" in lines[-1] and "flagged" in lines[-1] and "needs_review" in lines[-1]
    assert "\r" not in stderr and "\x1b" not in stderr


# --- submit -------------------------------------------------------------------------------


def test_submit_waits_with_progress_and_writes_results_in_order(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    script(scripted_openai)
    serve = start_serve(provider_env(scripted_openai.base_url))
    path, out = pairs_file(tmp_path, [line for line, _ in LINES]), tmp_path / "results.jsonl"
    args = ["submit", str(path), "--server", serve.base_url, "--wait", "--poll-seconds", "0.2"]
    done = faithscreen({}, *args, "--out", str(out), "--name", "nightly")
    assert done.returncode == 0, done.stderr
    batch_id = done.stdout.strip()
    check_results(out.read_text())
    check_progress(done.stderr, 4)
    with serve.client() as client:
        batch = client.get(f"/v1/batches/{batch_id}").json()
        served = client.get(f"/v1/batches/{batch_id}/results").text
    assert batch["name"] == "nightly" and batch["total"] == 4
    # The server's rows, each with its file line added (the server never saw the file).
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [json.loads(line) for line in served.splitlines()] == [
        {name: value for name, value in row.items() if name != "line"} for row in written
    ]

    # The same file and name again: the same batch, nothing new stored or screened.
    asked = len(scripted_openai.requests)
    again = faithscreen({}, "submit", str(path), "--server", serve.base_url, "--name", "nightly")
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == batch_id
    with serve.client() as client:
        assert len(client.get("/v1/batches").json()["items"]) == 1
    assert len(scripted_openai.requests) == asked


def test_submit_writes_results_to_stdout_without_out(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    script(scripted_openai)
    serve = start_serve(provider_env(scripted_openai.base_url))
    path = pairs_file(tmp_path, [line for line, _ in LINES])
    done = faithscreen({}, "submit", str(path), "--server", serve.base_url, "--wait")
    assert done.returncode == 0, done.stderr
    check_results(done.stdout)  # only result lines: the batch id went to stderr
    check_progress(done.stderr, 4)


def test_submit_names_the_lines_the_server_refuses_and_nothing_is_stored(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_MAX_STATEMENT_BYTES="1000")
    serve = start_serve(env)
    too_long = {"informal": INFORMAL, "formal": formal("x" * 2000)}
    lines = [LINES[0][0], None, too_long, LINES[1][0], too_long]
    done = faithscreen({}, "submit", str(pairs_file(tmp_path, lines)), "--server", serve.base_url)
    assert done.returncode == 2
    assert "lines 3, 5: formal:" in done.stderr
    assert "FAITHSCREEN_MAX_STATEMENT_BYTES" in done.stderr
    assert "nothing was screened" in done.stderr
    with serve.client() as client:
        assert client.get("/v1/batches").json()["items"] == []
        assert client.get("/v1/screenings").json()["items"] == []
    assert scripted_openai.requests == []


# --- screen -------------------------------------------------------------------------------


def test_screen_runs_a_file_locally_and_writes_results_in_order(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    script(scripted_openai)
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    path, out = pairs_file(tmp_path, [line for line, _ in LINES]), tmp_path / "results.jsonl"
    done = faithscreen(env, "screen", str(path), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    check_results(out.read_text())
    check_progress(done.stderr, 4)


def test_screen_refuses_a_file_with_an_invalid_line_and_screens_nothing(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    lines = [LINES[0][0], {"informal": INFORMAL}, LINES[1][0]]
    done = faithscreen(env, "screen", str(pairs_file(tmp_path, lines)))
    assert done.returncode == 2
    assert "line 2: formal: Field required" in done.stderr
    assert done.stdout == ""
    assert stored_screenings(database_url) == 0
    assert scripted_openai.requests == []


def test_screen_names_the_lines_that_need_a_provider(database_url: str, tmp_path: Path) -> None:
    lines = [LINES[3][0], LINES[0][0], None, LINES[1][0]]
    done = faithscreen(
        {"FAITHSCREEN_DATABASE_URL": database_url}, "screen", str(pairs_file(tmp_path, lines))
    )
    assert done.returncode == 2
    assert "lines 2, 4: replies: no LLM provider is configured" in done.stderr
    assert "FAITHSCREEN_TRANSLATOR_BASE_URL" in done.stderr
    assert stored_screenings(database_url) == 0  # not even line 1, with its replies


def stored_screenings(database_url: str) -> int:
    engine = sa.create_engine(sync_url(database_url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            return int(connection.execute(sa.text("SELECT count(*) FROM screenings")).scalar_one())
    finally:
        engine.dispose()


def test_sigterm_stops_screen_and_releases_its_jobs_for_the_next_run(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    """A pipeline's timeout sends SIGTERM: `screen` stops as on Ctrl-C, and leaves no job
    held by a lease a later run on this database would first have to wait out."""
    scripted_openai.script("cli_hang", steps=[Hang(600)] * 4)
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_SHUTDOWN_GRACE_SECONDS="1",
    )
    line = {"informal": INFORMAL, "formal": formal("cli_hang")}
    process = subprocess.Popen(
        [FAITHSCREEN, "screen", str(pairs_file(tmp_path, [line]))],
        env=cli_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        scripted_openai.wait_for_requests(1)  # a call is in flight: the job is leased
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "interrupted; stored pairs stay in the database" in stderr
    jobs = db_rows(database_url, "SELECT status, lease_owner FROM jobs")
    assert jobs == [{"status": "queued", "lease_owner": None}]


def test_submit_sends_its_api_key_and_says_when_one_is_needed(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, database_url: str, tmp_path: Path
) -> None:
    serve = start_serve(provider_env(scripted_openai.base_url, FAITHSCREEN_AUTH="on"))
    path = pairs_file(tmp_path, [LINES[3][0]])  # supplied replies: decided at once
    refused = faithscreen({}, "submit", str(path), "--server", serve.base_url)
    assert refused.returncode == 1
    assert "HTTP 401" in refused.stderr and "--api-key" in refused.stderr
    created = faithscreen(
        {}, "keys", "create", "--role", "submitter", "--name", "cli", "--database-url", database_url
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.splitlines()[-1]
    env = {"FAITHSCREEN_API_KEY": key}
    done = faithscreen(env, "submit", str(path), "--server", serve.base_url, "--wait")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["outcome"] for line in done.stdout.splitlines()] == ["flagged"]


# --- --skip-invalid -----------------------------------------------------------------------

# Lines 2 (no formal) and 4 (not JSON) are invalid; line 3 is blank; 1 and 5 are valid.
WITH_INVALID: list[str] = [
    json.dumps(LINES[0][0]),
    json.dumps({"informal": INFORMAL}),
    "",
    "{not json",
    json.dumps(LINES[3][0]),
]
TOO_LONG = json.dumps({"informal": INFORMAL, "formal": formal("x" * 2000), "external_id": "long"})


def raw_pairs_file(tmp_path: Path, lines: list[str], name: str = "raw") -> Path:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def check_left_out(stderr: str) -> None:
    assert "left out 2 invalid lines" in stderr
    assert "line 2: formal: Field required" in stderr
    assert "line 4: not valid JSON" in stderr


def check_lined(stdout: str) -> None:
    """One row per item and per left-out line, in file order, each with its line: a join
    with the file by line cannot misalign (blank line 3 is no item and has no row)."""
    rows = [json.loads(line) for line in stdout.splitlines()]
    assert [(r["line"], r["index"], r["external_id"], r["status"]) for r in rows] == [
        (1, 0, "one", "done"),
        (2, None, None, "invalid"),
        (4, None, None, "invalid"),
        (5, 1, "three", "done"),
    ]
    assert [r["outcome"] for r in rows] == ["passed", None, None, "flagged"]
    assert rows[1]["error"] == "formal: Field required"
    assert rows[2]["error"].startswith("not valid JSON")
    assert "error" not in rows[0] and rows[1]["reasons"] == [] and rows[1]["id"] is None


def check_refused(done: subprocess.CompletedProcess[str]) -> None:
    """Without --skip-invalid: refused as before, nothing screened."""
    assert done.returncode == 2
    assert "line 2: formal: Field required" in done.stderr and "nothing was screened" in done.stderr
    assert "left out" not in done.stderr


def test_submit_skip_invalid_screens_the_valid_lines_and_names_the_others(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_MAX_STATEMENT_BYTES="1000")
    serve = start_serve(env)
    path, server = raw_pairs_file(tmp_path, WITH_INVALID), ("--server", serve.base_url)
    check_refused(faithscreen({}, "submit", str(path), *server))
    with serve.client() as client:
        assert client.get("/v1/batches").json()["items"] == []

    done = faithscreen({}, "submit", str(path), *server, "--skip-invalid", "--wait")
    assert done.returncode == 0, done.stderr
    check_left_out(done.stderr)
    check_lined(done.stdout)

    # Only intake knows the size limit: line 6, past the left-out lines, is named as 6.
    longer = raw_pairs_file(tmp_path, [*WITH_INVALID, TOO_LONG], "longer")
    refused = faithscreen({}, "submit", str(longer), *server, "--skip-invalid")
    assert refused.returncode == 2
    assert (
        "line 6: formal:" in refused.stderr and "FAITHSCREEN_MAX_STATEMENT_BYTES" in refused.stderr
    )
    with serve.client() as client:
        assert len(client.get("/v1/batches").json()["items"]) == 1


def test_screen_skip_invalid_screens_the_valid_lines_and_names_the_others(
    database_url: str, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    env = provider_env(
        scripted_openai.base_url,
        FAITHSCREEN_DATABASE_URL=database_url,
        FAITHSCREEN_MAX_STATEMENT_BYTES="1000",
    )
    path = raw_pairs_file(tmp_path, WITH_INVALID)
    check_refused(faithscreen(env, "screen", str(path)))
    assert stored_screenings(database_url) == 0

    done = faithscreen(env, "screen", str(path), "--skip-invalid")
    assert done.returncode == 0, done.stderr
    check_left_out(done.stderr)
    check_lined(done.stdout)

    longer = raw_pairs_file(tmp_path, [*WITH_INVALID, TOO_LONG], "longer")
    refused = faithscreen(env, "screen", str(longer), "--skip-invalid")
    assert refused.returncode == 2
    assert "line 6: formal:" in refused.stderr
    assert stored_screenings(database_url) == 2  # the first run's, nothing of this one

    nothing_valid = raw_pairs_file(tmp_path, WITH_INVALID[1:4], "nothing_valid")
    empty = faithscreen(env, "screen", str(nothing_valid), "--skip-invalid")
    assert empty.returncode == 2
    assert "left out 2 invalid lines" in empty.stderr and "holds no pairs" in empty.stderr
