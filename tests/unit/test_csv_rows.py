"""The one CSV writer: a cell a spreadsheet would run as a formula gets a leading `'`
(OWASP's CSV injection rule), every other cell is written as it is, and whatever the text,
a CSV reader reads each record back as one row of the same cells."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.calibration.rows import CALIBRATION_COLUMNS, calibration_rows
from app.csv_rows import FORMULA_STARTS, cell, csv_record, csv_row, csv_table, neutralised


def read_back(written: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(written.decode("utf-8"), newline="")))


@pytest.mark.parametrize(
    "text",
    ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "\0x", '=HYPERLINK("https://e.example")'],
)
def test_a_cell_that_starts_a_formula_gets_a_quote(text: str) -> None:
    assert neutralised(text) == "'" + text
    assert read_back(csv_record([neutralised(text), "x"])) == [["'" + text, "x"]]


def test_a_cell_that_starts_with_a_quote_gets_one_more() -> None:
    # Else `'=1` read back could not be told from a neutralised `=1`.
    assert [neutralised("'=1"), neutralised("'x")] == ["''=1", "''x"]


@pytest.mark.parametrize("text", ["", "a=1", " =1", "x-1", "ümlaut", "1", "x'"])
def test_any_other_cell_is_left_as_it_is(text: str) -> None:
    assert neutralised(text) == text


def test_values_become_cells_as_json_writes_them() -> None:
    assert [cell(v) for v in (None, True, False, 3, -2, 0.25)] == [
        "", "true", "false", "3", "-2", "0.25",
    ]  # fmt: skip
    # Text from outside is neutralised; a list or an object is compact JSON, neutralised.
    assert [cell("-2"), cell(["=a", "b"]), cell({"k": "ü"})] == [
        "'-2", '["=a","b"]', '{"k":"ü"}',
    ]  # fmt: skip


def test_a_row_follows_the_columns_and_leaves_a_missing_field_empty() -> None:
    written = csv_table(("a", "b", "c"), [{"c": "=x", "a": 1}])
    assert read_back(written) == [["a", "b", "c"], ["1", "", "'=x"]]
    assert written.endswith(b"\n") and b"\r" not in written


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
CELLS = st.lists(TEXT, min_size=2, max_size=6)


@given(CELLS)
def test_each_record_reads_back_as_the_neutralised_cells(texts: list[str]) -> None:
    written = csv_record([neutralised(text) for text in texts])
    (row,) = read_back(written)
    assert row == [neutralised(text) for text in texts]
    for read, text in zip(row, texts, strict=True):
        assert not read.startswith(FORMULA_STARTS)
        # The quote is added exactly when the text starts like a formula or with one, so
        # removing one leading quote gives the text back.
        assert read == ("'" + text if text.startswith((*FORMULA_STARTS, "'")) else text)
        assert (read[1:] if read.startswith("'") else read) == text


@given(st.lists(st.dictionaries(st.sampled_from("abc"), TEXT | st.none()), max_size=5))
def test_a_table_reads_back_as_one_row_per_record(rows: list[dict[str, str | None]]) -> None:
    header, *read = read_back(csv_table(("a", "b", "c"), rows))
    assert header == ["a", "b", "c"]
    assert read == [[cell(row.get(name)) for name in header] for row in rows]
    assert all(not value.startswith(FORMULA_STARTS) for line in read for value in line)


def test_csv_row_writes_a_lone_surrogate_as_its_escape() -> None:
    assert csv_row(("a", "b"), {"a": "x\ud800", "b": ""}) == b"x\\ud800,\n"


def test_a_calibration_becomes_one_row_per_rate_and_slice() -> None:
    rate = {"k": 1, "n": 2, "rate": 0.5, "low": 0.1, "high": 0.9}
    judge = {"catches": rate, "faithful": rate, "unreadable": rate, "pairs": 2}
    body = {
        "batch_id": "b",
        "rates": {"false_pass": rate},
        "by_tag": {"t": {"rates": {"false_pass": rate}}},
        "by_kind": {"theorem": {"rates": {"automation": rate}}},
        "by_judge": {"judge": judge},
    }
    rows = calibration_rows(body)
    assert [(r["slice"], r["measure"]) for r in rows] == [
        ("all", "false_pass"),
        ("tag:t", "false_pass"),
        ("kind:theorem", "automation"),
        ("judge:judge", "catches"),
        ("judge:judge", "faithful"),
        ("judge:judge", "unreadable"),
    ]
    assert all(list(row) == list(CALIBRATION_COLUMNS) for row in rows)
