"""The results file of `submit --wait` and `screen`: one row per item in file order, each
with its file `line`, and with --skip-invalid one row per invalid line left out, so a join
with the pairs file by line never misaligns (`index` counts the items sent, and skips
nothing).

An item's row is the server's results row (`index`, `id`, `external_id`, `status`,
`outcome`, `reasons`, `blind`, `lean_status`) plus `line`. A left-out line's row has the same
fields, with `index`, `id` and `outcome` null, `status` "invalid", `reasons` [], its
`external_id` when it could be read, and `error`: what is wrong with it. Blank lines and
skipped decision rows (superseded, withdrawn, unsure, not final) are no item and get no row.
Every row is written by app/json_lines.py, or with `--format csv` by app/csv_rows.py
(RESULTS_COLUMNS under a header row, a cell that would start a spreadsheet formula
prefixed with `'`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from itertools import chain, groupby
from typing import Any

from app.cli.pairs_file import LineProblem, Survey, line_error
from app.csv_rows import csv_header, csv_row
from app.json_lines import json_line

INVALID = "invalid"
# The CSV's columns: GET /v1/batches/{id}/results's fields (?format=csv), then ours.
RESULTS_COLUMNS = (
    "index", "id", "external_id", "status", "outcome", "reasons", "blind", "lean_status",
    "line", "error",
)  # fmt: skip


def left_out_rows(found: Survey) -> list[dict[str, Any]]:
    """A row for every line `--skip-invalid` left out, in line order."""
    ordered = sorted(found.left_out, key=lambda problem: problem.number or 0)
    return [
        _invalid_row(number or 0, list(problems))
        for number, problems in groupby(ordered, key=lambda problem: problem.number)
    ]


def _invalid_row(number: int, problems: list[LineProblem]) -> dict[str, Any]:
    external_id = next((p.external_id for p in problems if p.external_id is not None), None)
    return {
        "index": None,
        "id": None,
        "external_id": external_id,
        "status": INVALID,
        "outcome": None,
        "reasons": [],
        "line": number,
        "error": line_error(problems),
    }


def lined_results(
    results: Iterable[dict[str, Any]], found: Survey, *, as_csv: bool = False
) -> Iterator[bytes]:
    """`lined_rows` as JSONL, or as CSV under a header."""
    rows = lined_rows(results, found)
    if not as_csv:
        return map(json_line, rows)
    return chain([csv_header(RESULTS_COLUMNS)], (csv_row(RESULTS_COLUMNS, row) for row in rows))


def lined_rows(results: Iterable[dict[str, Any]], found: Survey) -> Iterator[dict[str, Any]]:
    """`results` (in index order), each with its line, the left-out lines' rows placed
    among them by line."""
    pending = iter(left_out_rows(found))
    waiting = next(pending, None)
    for row in results:
        line = found.line_of(row.get("index"))
        while waiting is not None and line is not None and waiting["line"] < line:
            yield waiting
            waiting = next(pending, None)
        yield row | {"line": line}
    while waiting is not None:
        yield waiting
        waiting = next(pending, None)


def parsed(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    """Results lines as a server sends them, as rows."""
    for line in lines:
        if line.strip():
            row: dict[str, Any] = json.loads(line)
            yield row
