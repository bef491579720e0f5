"""`faithscreen parse`: in process through typer's CliRunner, and as the installed command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import app.cli.parse  # noqa: F401 -- registers the command on `cli`
from app.cli.root import cli
from app.contract import PARSER_VERSION

FAITHFUL = b"BACK-TRANSLATION: x \xe2\x89\xa5 0\r\nISSUES: none\r\nVERDICT: FAITHFUL\r\n"
KEYS = ["verdict", "parse_status", "back_translation", "issues", "parser_version"]


def run(args: list[str], stdin: bytes = b"") -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(cli, ["parse", *args], input=stdin)
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, rows, result.stderr


def test_a_reply_file_prints_one_reading(tmp_path: Path) -> None:
    (tmp_path / "reply.txt").write_bytes(FAITHFUL)
    code, rows, _ = run([str(tmp_path / "reply.txt")])
    assert code == 0
    assert rows == [
        {
            "verdict": "faithful",
            "parse_status": "ok",
            "back_translation": "x ≥ 0",
            "issues": "none",
            "parser_version": PARSER_VERSION,
        }
    ]


def test_a_bare_cr_in_the_file_survives_reading(tmp_path: Path) -> None:
    # Text-mode reading would turn the lone CR into a line end and see a clean reply.
    (tmp_path / "reply.txt").write_bytes(b"ISSUES: none\rVERDICT: FAITHFUL\n")
    code, rows, _ = run([str(tmp_path / "reply.txt")])
    assert (code, rows[0]["parse_status"], rows[0]["verdict"]) == (0, "bare_cr", "unclear")


@pytest.mark.parametrize("args", [[], ["-"]])
def test_stdin_is_the_default_and_dash(args: list[str]) -> None:
    code, rows, _ = run(args, b"VERDICT: MISMATCH\r")
    assert (code, rows[0]["parse_status"]) == (0, "bare_cr")
    code, rows, _ = run(args, b"\xef\xbb\xbfVERDICT: MISMATCH\n")  # a leading BOM is the file's
    assert (code, rows[0]["verdict"]) == (0, "mismatch")


def test_non_ok_statuses_still_exit_zero() -> None:
    code, rows, _ = run([], b"no verdict here")
    assert code == 0
    assert rows == [
        {
            "verdict": "unclear",
            "parse_status": "missing",
            "back_translation": None,
            "issues": None,
            "parser_version": PARSER_VERSION,
        }
    ]


JSONL = (
    b'{"id": "a1", "response": "VERDICT: FAITHFUL"}\r\n'
    b"\n   \n"
    b'{"id": 7, "response": "ISSUES: \\u2200 n\\nVERDICT: maybe"}\n'
    b'{"response": "VERDICT: FAITHFUL\\rVERDICT: MISMATCH"}\n'
    b'{"id": ["x"], "response": "BACK-TRANSLATION: \xc3\xa9\\nVERDICT: unclear"}'
)


def test_jsonl_echoes_ids_and_skips_blank_lines(tmp_path: Path) -> None:
    (tmp_path / "replies.jsonl").write_bytes(JSONL)
    code, rows, _ = run(["--jsonl", str(tmp_path / "replies.jsonl")])
    assert code == 0
    assert [(row["id"], row["parse_status"], row["verdict"]) for row in rows] == [
        ("a1", "ok", "faithful"),
        (7, "invalid", "unclear"),
        (None, "bare_cr", "unclear"),
        (["x"], "ok", "unclear"),
    ]
    assert rows[1]["issues"] == "\u2200 n"
    assert all(list(row) == ["id", *KEYS] for row in rows)


def test_jsonl_output_is_utf8_not_ascii_escaped() -> None:
    result = CliRunner().invoke(cli, ["parse", "--jsonl"], input=JSONL)
    assert "é" in result.stdout and "\\u00e9" not in result.stdout


def test_a_lone_surrogate_is_written_as_valid_json() -> None:
    code, rows, _ = run(["--jsonl"], b'{"id": 1, "response": "ISSUES: \\ud800"}\n')
    assert (code, rows[0]["issues"]) == (0, "\ud800")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b"not json", "line 3: not valid JSON"),
        (b'["VERDICT: FAITHFUL"]', "line 3: expected a JSON object"),
        (b'{"id": 2, "response": null}', "line 3: expected a JSON object"),
        (b'{"id": 2}', "line 3: expected a JSON object"),
        (b'{"id": NaN, "response": ""}', "line 3: not valid JSON"),
        (b'{"response": "\xff"}', "line 3: not valid UTF-8"),
    ],
)
def test_a_bad_jsonl_line_is_named_and_the_rest_are_read_then_exit_1(
    bad: bytes, message: str
) -> None:
    good = b'{"id": 1, "response": "VERDICT: MISMATCH"}\n\n'
    later = b'{"id": 3, "response": "VERDICT: FAITHFUL"}\n'
    code, rows, stderr = run(["--jsonl"], good + bad + b"\n" + later + bad + b"\n")
    assert code == 1
    assert message in stderr
    assert message.replace("line 3", "line 5") in stderr
    assert "2 lines could not be read" in stderr
    assert [row["id"] for row in rows] == [1, 3]


@pytest.mark.parametrize("args", [["missing.txt"], ["--jsonl", "missing.jsonl"]])
def test_an_unreadable_file_exits_2(args: list[str]) -> None:
    code, rows, stderr = run(args)
    assert (code, rows) == (2, [])
    assert "cannot read missing" in stderr


def test_a_reply_that_is_not_utf8_exits_2() -> None:
    code, rows, stderr = run([], b"VERDICT: FAITHFUL \xff")
    assert (code, rows) == (2, [])
    assert "not valid UTF-8 at byte 18" in stderr


FAITHSCREEN = str(Path(sys.executable).with_name("faithscreen"))


def test_the_installed_command_reads_a_file_without_newline_translation(tmp_path: Path) -> None:
    (tmp_path / "reply.txt").write_bytes(b"BACK-TRANSLATION: \xe2\x88\x80\rVERDICT: FAITHFUL")
    done = subprocess.run(
        [FAITHSCREEN, "parse", str(tmp_path / "reply.txt")], capture_output=True, timeout=180
    )
    assert done.returncode == 0, done.stderr
    row = json.loads(done.stdout)
    assert (row["parse_status"], row["back_translation"]) == (
        "bare_cr",
        "\u2200\rVERDICT: FAITHFUL",
    )


def test_the_installed_command_streams_jsonl_from_stdin() -> None:
    done = subprocess.run(
        [FAITHSCREEN, "parse", "--jsonl"],
        input=JSONL + b"\n[1]\n",
        capture_output=True,
        timeout=180,
    )
    assert done.returncode == 1
    assert b"line 7:" in done.stderr
    rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [row["verdict"] for row in rows] == ["faithful", "unclear", "unclear", "unclear"]
