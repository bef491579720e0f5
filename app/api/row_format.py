"""The `format` query parameter of the endpoints that send rows (the decisions export, a
batch's results, a calibration): their JSON as before, or CSV written by app/csv_rows.py.

A Literal, so OpenAPI lists the values and an unknown one is a 422 `validation_error`
from the one error handler, naming the values it takes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query

from app.csv_rows import CSV_MEDIA_TYPE

CSV_DOC = (
    "`csv`: the same fields as columns under a header row, a list or object as compact JSON "
    "in its cell, UTF-8; a cell starting with `=`, `+`, `-`, `@`, a tab, a carriage return "
    "or NUL gets a leading `'`, so a spreadsheet shows it as text instead of running it "
    "(one starting with `'` gets one more: remove one leading `'` to read a value back)."
)

LinesFormat = Annotated[
    Literal["jsonl", "csv"],
    Query(alias="format", description=f"`jsonl` (the default): one JSON object a line. {CSV_DOC}"),
]
ObjectFormat = Annotated[
    Literal["json", "csv"],
    Query(alias="format", description=f"`json` (the default): the object. {CSV_DOC}"),
]


def csv_content(description: str) -> dict[str, Any]:
    """The `text/csv` entry of a 200 response's content, for `responses=`."""
    schema = {"type": "string", "description": description}
    return {CSV_MEDIA_TYPE.split(";")[0]: {"schema": schema}}
