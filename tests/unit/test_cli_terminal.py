"""app/cli/terminal.py and what goes through it: control characters from outside are shown
as visible escapes (newline and tab kept), in plain lines, in the live progress line and
in the results and JSON the commands print."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.cli.progress import ProgressReport, Snapshot
from app.cli.terminal import shown
from app.evidence.bidi_controls import BIDI_CONTROLS
from app.json_lines import json_line, json_text

# C0 but newline and tab, DEL, C1 (CSI among them), and the bidirectional controls.
CONTROLS = [chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))]
CONTROLS += ["\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F))]
CONTROLS += [chr(c) for c in range(0x2066, 0x206A)]


def test_every_control_character_is_shown_as_an_escape() -> None:
    for char in CONTROLS:
        visible = shown(f"a{char}b")
        assert char not in visible and visible.startswith("a\\") and visible.endswith("b")
    assert shown("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07"
    assert shown("\u202eabc") == "\\u202eabc"
    assert shown("table\tcell\nnext ℕ ≥ 0 é") == "table\tcell\nnext ℕ ≥ 0 é"


def test_json_printed_or_written_escapes_them_and_reads_back_the_same() -> None:
    value = {"model": "".join(CONTROLS) + "\u2028\u2029ℕ"}
    for text in (json_text(value), json_line(value).decode()):
        assert not any(char in text for char in CONTROLS), text
        assert "ℕ" in text and json.loads(text) == value


@pytest.mark.parametrize("live", [True, False])
def test_the_progress_line_shows_its_label_inert(live: bool) -> None:
    stream = io.StringIO()
    report = ProgressReport(stream, label="screening \x1b[2Jpairs\u202e.jsonl", live=live)
    report.update(Snapshot(1, 2, {"passed\x9b": 1}))
    report.finish()
    written = stream.getvalue()
    assert "\x1b" not in written and "\u202e" not in written and "\x9b" not in written
    assert "\\x1b[2Jpairs\\u202e.jsonl" in written and "passed\\x9b" in written


def test_a_command_names_a_hostile_file_name_inert(tmp_path: Path) -> None:
    missing = tmp_path / "\x1b]0;pwned\x07\u202epairs.jsonl"
    result = CliRunner().invoke(cli, ["submit", str(missing), "--server", "http://127.0.0.1:9"])
    assert result.exit_code != 0 and "cannot read" in result.stderr, result.stderr
    assert "\x1b" not in result.stderr and "\u202e" not in result.stderr
    assert "\\x1b]0;pwned\\x07\\u202epairs.jsonl" in result.stderr


@pytest.mark.parametrize("control", sorted(BIDI_CONTROLS))
def test_every_bidi_control_the_evidence_check_names_is_escaped_everywhere(control: str) -> None:
    """The terminal and JSONL writers keep no list of their own to fall out of step."""
    assert shown(f"a{control}b") == f"a\\u{ord(control):04x}b"
    assert control.encode() not in json_line({"x": f"a{control}b"})
