"""app/cli/results_file.py: every results row carries its file line, and each line
--skip-invalid left out has a row of its own, in file order, so a join by line holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.cli.pairs_file import survey
from app.cli.results_file import lined_results, lined_rows

VALID = {"informal": "n + 0 = n", "formal": "theorem t (n : ℕ) : n + 0 = n := rfl"}


def pairs(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def served(count: int) -> list[dict[str, Any]]:
    """Rows as the results endpoint gives them, one per item sent."""
    return [
        {"index": i, "id": f"s{i}", "external_id": f"e{i}", "status": "done",
         "outcome": "passed", "reasons": []}
        for i in range(count)
    ]  # fmt: skip


def test_rows_carry_their_line_and_left_out_lines_have_rows_in_place(tmp_path: Path) -> None:
    lines = [
        json.dumps({**VALID, "external_id": "e0"}),  # 1
        json.dumps({"informal": "x", "external_id": "no-formal"}),  # 2: invalid
        "",  # 3: blank, no item and no row
        "{not json",  # 4: invalid
        json.dumps({**VALID, "external_id": "e1"}),  # 5
        json.dumps({"formal": 3}),  # 6: invalid, last
    ]
    found = survey(pairs(tmp_path, lines), skip_invalid=True)
    rows = list(lined_rows(served(found.total), found))
    assert [(r["line"], r["index"], r["status"]) for r in rows] == [
        (1, 0, "done"),
        (2, None, "invalid"),
        (4, None, "invalid"),
        (5, 1, "done"),
        (6, None, "invalid"),
    ]
    assert rows[1]["external_id"] == "no-formal" and rows[1]["error"] == "formal: Field required"
    assert rows[2]["external_id"] is None and rows[2]["error"].startswith("not valid JSON")
    assert "informal: Field required" in rows[4]["error"] and "formal:" in rows[4]["error"]
    assert set(rows[1]) == set(rows[0]) | {"error"}  # the same fields, so a table reads both


def test_without_skip_invalid_every_row_gets_its_line_and_no_row_is_added(tmp_path: Path) -> None:
    found = survey(pairs(tmp_path, ["", json.dumps(VALID), "", json.dumps(VALID)]))
    written = b"".join(lined_results(served(found.total), found))
    assert [json.loads(line)["line"] for line in written.splitlines()] == [2, 4]


def test_results_are_written_as_json_lines_with_line_breaks_escaped(tmp_path: Path) -> None:
    found = survey(pairs(tmp_path, [json.dumps(VALID)]))
    row = served(1)[0] | {"external_id": "a\u2028b"}
    assert b"".join(lined_results([row], found)).count(b"\n") == 1
