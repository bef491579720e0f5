"""app/cli/batch.py without a server: the idempotency key, the results file, and the
refusals that happen before anything is sent or stored. The real paths (a real
`faithscreen serve`, a real local run) are in tests/e2e/test_cli_batch.py."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.cli.batch import EXIT_BAD_INPUT, EXIT_FAILURE, default_idempotency_key, results_sink
from app.settings import get_settings
from tests.support.serve_process import free_port

REQUEST = {"informal": "n + 0 = n", "formal": "theorem t (n : ℕ) : n + 0 = n := sorry"}


@pytest.fixture(autouse=True)
def fresh_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", f"sqlite:///{tmp_path / 'local.db'}")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def pairs(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_the_default_key_is_the_same_for_the_same_file_and_name() -> None:
    key = default_idempotency_key("ab" * 32, "nightly")
    assert key == default_idempotency_key("ab" * 32, "nightly")
    assert len(key) == 64 and int(key, 16) >= 0
    others = {
        default_idempotency_key("cd" * 32, "nightly"),
        default_idempotency_key("ab" * 32, "weekly"),
        default_idempotency_key("ab" * 32, None),
    }
    assert key not in others and len(others) == 3


def test_the_results_file_appears_whole(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    with results_sink(out) as sink:
        sink.write(b"one\n")
        assert not out.exists()  # nothing half-written under the final name
    assert out.read_bytes() == b"one\n"
    assert list(tmp_path.iterdir()) == [out]


def test_a_failed_run_leaves_an_earlier_results_file_alone(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_bytes(b"earlier\n")
    with pytest.raises(RuntimeError), results_sink(out) as sink:
        sink.write(b"partial\n")
        raise RuntimeError("the run failed")
    assert out.read_bytes() == b"earlier\n"
    assert list(tmp_path.iterdir()) == [out]


def test_submit_reports_every_bad_line_and_sends_nothing(tmp_path: Path) -> None:
    file = pairs(tmp_path, json.dumps(REQUEST), "", "{oops", json.dumps({"informal": "x"}))
    # Nothing listens on this port: reaching it would fail with another message.
    code, stdout, stderr = run("submit", str(file), "--server", f"http://127.0.0.1:{free_port()}")
    assert code == EXIT_BAD_INPUT
    assert stdout == ""
    assert "nothing was screened" in stderr
    assert "line 3: not valid JSON" in stderr
    assert "line 4: formal: Field required" in stderr


def test_submit_refuses_a_file_with_no_pairs(tmp_path: Path) -> None:
    code, _, stderr = run("submit", str(pairs(tmp_path, "", " ")), "--server", "http://x")
    assert code == EXIT_BAD_INPUT
    assert "holds no pairs" in stderr


def test_submit_says_when_the_server_cannot_be_reached(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, stderr = run("submit", str(pairs(tmp_path, json.dumps(REQUEST))), "--server", url)
    assert code == EXIT_FAILURE
    assert f"cannot reach the server at {url}" in stderr
    assert "faithscreen serve" in stderr


def test_an_unreachable_server_url_is_shown_without_its_credentials(tmp_path: Path) -> None:
    url = f"http://reviewer:pw-secret@127.0.0.1:{free_port()}/?token=tok-secret"
    code, _, stderr = run("submit", str(pairs(tmp_path, json.dumps(REQUEST))), "--server", url)
    assert code == EXIT_FAILURE
    assert "cannot reach the server at http://reviewer:***@127.0.0.1:" in stderr
    assert "pw-secret" not in stderr and "tok-secret" not in stderr


def test_submit_says_how_to_write_the_server_url(tmp_path: Path) -> None:
    file = pairs(tmp_path, json.dumps(REQUEST))
    code, _, stderr = run("submit", str(file), "--server", "127.0.0.1:8000")
    assert code == EXIT_FAILURE
    assert "give a URL like http://host:8000" in stderr


def test_submit_names_a_missing_file(tmp_path: Path) -> None:
    code, _, stderr = run("submit", str(tmp_path / "nope.jsonl"), "--server", "http://x")
    assert code == EXIT_BAD_INPUT
    assert "cannot read" in stderr and "nope.jsonl" in stderr


def test_screen_checks_every_line_before_it_touches_the_database(tmp_path: Path) -> None:
    file = pairs(tmp_path, "[1]", json.dumps(REQUEST), json.dumps(REQUEST | {"header": 1}))
    code, stdout, stderr = run("screen", str(file))
    assert code == EXIT_BAD_INPUT
    assert stdout == ""
    assert "line 1: expected a JSON object" in stderr
    assert "line 3: header: Input should be a valid string" in stderr
    assert not (tmp_path / "local.db").exists()


def test_the_default_key_differs_with_skip_invalid_and_is_unchanged_without() -> None:
    digest = "0" * 64
    before = hashlib.sha256(f"{digest}\nnightly".encode()).hexdigest()  # the key as it was
    assert default_idempotency_key(digest, "nightly") == before
    assert default_idempotency_key(digest, "nightly", skip_invalid=False) == before
    assert default_idempotency_key(digest, "nightly", skip_invalid=True) != before


@pytest.mark.parametrize("command", [["submit"], ["eval", "run"]])
def test_a_key_is_not_sent_in_clear_text_to_another_machine(
    tmp_path: Path, command: list[str]
) -> None:
    file = pairs(tmp_path, json.dumps(REQUEST | {"label": "faithful"}))
    server = "http://faithscreen.example.com:8000"
    code, stdout, stderr = run(*command, str(file), "--server", server, "--api-key", "fs_x")
    assert code == EXIT_FAILURE, stderr
    assert f"--server {server}: refusing to send the API key in clear text" in stderr
    assert "https://" in stderr and "fs_x" not in stdout + stderr
