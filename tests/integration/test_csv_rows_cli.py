"""`faithscreen eval run --format csv` and `eval show --format csv` print the calibration's
rows as GET /v1/batches/{id}/calibration?format=csv sends them (app/calibration/rows.py
through app/csv_rows.py), on SQLite and PostgreSQL, with pairs whose replies are supplied
(no provider needed)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.calibration.rows import CALIBRATION_COLUMNS
from app.cli import cli
from app.cli.results_file import RESULTS_COLUMNS
from app.settings import get_settings
from tests.support.batches import (
    TRANSLATOR_MISMATCH,
    no_api_keys,  # noqa: F401 (autouse)
    supplied_item,
)


def run(args: list[str]) -> str:
    done = CliRunner().invoke(cli, args)
    assert done.exit_code == 0, done.output
    return done.stdout


def test_eval_run_and_show_print_the_rates_as_csv(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    get_settings.cache_clear()
    rows = [
        supplied_item(0, translator=TRANSLATOR_MISMATCH, label="mismatch"),
        supplied_item(1, label="mismatch"),  # a false pass
        supplied_item(2, label="faithful"),
    ]
    pairs = tmp_path / "labelled.jsonl"
    pairs.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    try:
        printed = run(["eval", "run", str(pairs), "--format", "csv"])
        header, *table = list(csv.reader(io.StringIO(printed, newline="")))
        shown = run(["eval", "show", table[0][0], "--format", "csv"])
    finally:
        get_settings.cache_clear()
    assert header == list(CALIBRATION_COLUMNS)
    by_key = {(row[1], row[2]): row[3:5] for row in table}
    assert by_key["all", "false_pass"] == ["1", "2"]
    assert by_key["all", "false_alarm"] == ["0", "1"]
    assert shown == printed


def test_screen_writes_its_results_file_as_csv(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    get_settings.cache_clear()
    pairs, out = tmp_path / "pairs.jsonl", tmp_path / "results.csv"
    items = [supplied_item(0, external_id="=1+1"), supplied_item(1, external_id="plain")]
    lines = [json.dumps(item) + "\n" for item in items]
    pairs.write_text(lines[0] + "not json\n" + lines[1], encoding="utf-8")
    args = ["screen", str(pairs), "--skip-invalid", "--format", "csv"]
    try:
        refused = CliRunner().invoke(cli, args)  # CSV keeps control characters: a file only
        run([*args, "--out", str(out)])
    finally:
        get_settings.cache_clear()
    assert refused.exit_code == 2 and "--out" in refused.output
    header, *rows = list(csv.reader(io.StringIO(out.read_text("utf-8"), newline="")))
    assert header == list(RESULTS_COLUMNS)
    got = [dict(zip(header, row, strict=True)) for row in rows]
    assert [(r["external_id"], r["line"], r["status"]) for r in got] == [
        ("'=1+1", "1", "done"),
        ("", "2", "invalid"),
        ("plain", "3", "done"),
    ]
    assert got[0]["reasons"] == "[]" and got[1]["error"]
