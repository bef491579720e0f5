"""A calibration as rows: one per rate and slice, for a spreadsheet or a data frame.

The calibration object nests its rates (overall, by tag, by kind of statement, by Lean
status, by judge);
a table wants them long and flat, as pandas' `melt` would lay them out. Each row is one
rate of one slice with the fields the JSON gives it (`k`, `n`, `rate`, `low`, `high`), so
every number in a row can be checked against GET /v1/batches/{id}/calibration. The matrix,
configurations and cost stay in the JSON: they are not rates. Pure: a dict in, rows out.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from app.csv_rows import csv_table

# `slice`: `all`, `tag:<tag>`, `kind:<kind>`, `lean:<lean_status>` or `judge:<name>`;
# `measure`: the rate's name.
CALIBRATION_COLUMNS = ("batch_id", "slice", "measure", "k", "n", "rate", "low", "high")
Row = dict[str, Any]


def calibration_rows(body: Mapping[str, Any]) -> list[Row]:
    """The rows of a calibration object (app.calibration.service.batch_calibration)."""
    return [{"batch_id": body["batch_id"], **row} for row in _slices(body)]


def calibration_csv(body: Mapping[str, Any]) -> bytes:
    """The rows as CSV (app/csv_rows.py), under a header."""
    return csv_table(CALIBRATION_COLUMNS, calibration_rows(body))


def _slices(body: Mapping[str, Any]) -> Iterator[Row]:
    yield from _rates("all", body["rates"])
    for tag, part in body["by_tag"].items():
        yield from _rates(f"tag:{tag}", part["rates"])
    for kind, part in body["by_kind"].items():
        yield from _rates(f"kind:{kind}", part["rates"])
    for status, part in body.get("by_lean_status", {}).items():
        yield from _rates(f"lean:{status}", part["rates"])
    for name, judge in body.get("by_judge", {}).items():
        yield from _rates(f"judge:{name}", _judge_rates(judge))


def _rates(where: str, rates: Mapping[str, Mapping[str, Any]]) -> Iterator[Row]:
    for measure, rate in rates.items():
        yield {"slice": where, "measure": measure, **rate}


def _judge_rates(judge: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    # A judge's rates sit beside its counts; these three are the ones with k and n.
    return {name: judge[name] for name in ("catches", "faithful", "unreadable")}
