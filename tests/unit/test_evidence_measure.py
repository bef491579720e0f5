"""tools/measure_lints.py: the measurement table, on made-up rows and on the shared data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.evidence import CHECKS

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "measure_lints.py"
SHARED = Path("/work/shared/data")

CLEAN = "theorem t (n : ℕ) : n + 0 = n := by sorry"
FACTORIAL = "theorem t (n : ℕ) : 0 < n! := by sorry"


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def write_rows(path: Path, rows: list[dict[str, str | None]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def row(row_id: str, label: str, formal: str, why: str = "") -> dict[str, str | None]:
    return {"id": row_id, "label": label, "informal": None, "formal": formal, "why": why}


def table_line(output: str, code: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(f"| `{code}`"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_counts_precision_recall_class_and_rate(tmp_path: Path) -> None:
    dev = write_rows(
        tmp_path / "dev.jsonl",
        [
            row("a", "mismatch", FACTORIAL, "`n!` lexes as a fresh identifier"),
            row("b", "mismatch", CLEAN, "a missing hypothesis"),
            row("c", "faithful", FACTORIAL),  # a false positive
            row("d", "faithful", CLEAN),
        ],
    )
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    write_rows(pairs / "p.jsonl", [row("u1", "", FACTORIAL), row("u2", "", CLEAN)])
    cells = table_line(run(str(dev), "--pairs", str(pairs)), "auto_bound_variable")
    assert cells == [
        "`auto_bound_variable`", "review", "2", "1", "0.50", "0.50", "1 / 1", "1 / 2 (50.0%)"
    ]  # fmt: skip


def test_list_names_the_rows_fired_on(tmp_path: Path) -> None:
    dev = write_rows(tmp_path / "dev.jsonl", [row("a", "mismatch", FACTORIAL)])
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    output = run(str(dev), "--pairs", str(pairs), "--list")
    assert "auto_bound_variable\n  dev: a\n  unlabelled: -" in output


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared data is not on this machine")
def test_the_script_runs_end_to_end_on_the_shared_data() -> None:
    output = run()
    assert "125 labelled pairs (69 mismatch), 2059 unlabelled pairs" in output
    for check in CHECKS:
        cells = table_line(output, check.code)
        assert cells[1] == check.severity.value
        assert int(cells[2]) >= int(cells[3])  # fired >= true positives
    assert "| any check |" in output
