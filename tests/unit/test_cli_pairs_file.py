"""app/cli/pairs_file.py: reading pairs files (request lines and shared-data rows), line
numbers, the problems report, and the upload body."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app.cli import pairs_file
from app.cli.pairs_file import (
    LineProblem,
    PairLine,
    PairsFileError,
    describe_problems,
    ndjson_body,
    read_pairs,
    request_fields,
    survey,
)

SHARED_DATA = Path("/work/shared/data/pairs/pairs_minif2f_lean4.jsonl")
REQUEST = {"informal": "n + 0 = n", "formal": "theorem t (n : ℕ) : n + 0 = n := sorry"}
SHARED_ROW = {
    "id": "minif2f/t",
    "source": "miniF2F",
    "informal": "n + 0 = n",
    "informal_proof": None,
    "formal": "theorem t (n : ℕ) : n + 0 = n := sorry",
    "header": "import Mathlib",
    "repo": "yangky11/miniF2F-lean4",
    "commit": "5746b7d",
}


def write(tmp_path: Path, *lines: str | bytes) -> Path:
    path = tmp_path / "pairs.jsonl"
    encoded = (line if isinstance(line, bytes) else line.encode() for line in lines)
    path.write_bytes(b"".join(line + b"\n" for line in encoded))
    return path


def items(path: Path) -> list[dict[str, object]]:
    return [line.item for line in read_pairs(path) if isinstance(line, PairLine)]


def test_a_shared_data_row_keeps_the_pair_and_its_id_as_external_id() -> None:
    assert request_fields(dict(SHARED_ROW)) == {
        "informal": "n + 0 = n",
        "formal": "theorem t (n : ℕ) : n + 0 = n := sorry",
        "header": "import Mathlib",
        "external_id": "minif2f/t",
    }


def test_a_request_line_is_kept_as_it_is() -> None:
    request = REQUEST | {"external_id": "x", "options": {"confirmations": 1}, "header": ""}
    assert request_fields(dict(request)) == request


def test_a_row_with_both_id_and_external_id_is_not_mapped_and_is_refused(
    tmp_path: Path,
) -> None:
    row = REQUEST | {"id": "a", "external_id": "b"}
    assert request_fields(dict(row)) == row
    found = survey(write(tmp_path, json.dumps(row)))
    assert found.problems == [LineProblem(1, "Extra inputs are not permitted", "id")]


def test_every_shared_data_file_row_reads_as_a_request() -> None:
    found = survey(SHARED_DATA)
    assert found.total == len(SHARED_DATA.read_bytes().splitlines())
    assert found.problems == []


def test_blank_lines_are_skipped_but_counted(tmp_path: Path) -> None:
    path = write(tmp_path, "", json.dumps(REQUEST), "  \r", json.dumps(SHARED_ROW))
    found = survey(path)
    assert found.line_numbers == [2, 4]
    assert [found.line_of(i) for i in (0, 1, 2, -1, True)] == [2, 4, None, None, None]


def test_the_digest_is_the_sha256_of_the_file_bytes(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps(REQUEST), "")
    assert survey(path).digest == hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_unreadable_line_is_reported_with_its_number(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(REQUEST),
        "{not json",
        "[1, 2]",
        b"\xff\xfe{}",
        json.dumps(REQUEST | {"informal": ""}),
        json.dumps({"formal": "x", "options": {"confirmations": "2"}}),
    )
    found = survey(path)
    assert [(p.number, p.field) for p in found.problems] == [
        (2, ""),
        (3, ""),
        (4, ""),
        (5, "informal"),
        (6, "informal"),
        (6, "options.confirmations"),
    ]
    assert found.problems[0].message.startswith("not valid JSON")
    assert "JSON object" in found.problems[1].message
    assert "UTF-8" in found.problems[2].message
    assert found.total == 3  # the lines that are JSON objects, valid or not


def test_nan_in_a_dropped_field_is_fine_but_not_in_a_kept_one(tmp_path: Path) -> None:
    dropped = json.dumps(SHARED_ROW).replace('"informal_proof": null', '"informal_proof": NaN')
    kept = json.dumps(REQUEST | {"options": {"confirmations": 1}}).replace("1}", "NaN}")
    found = survey(write(tmp_path, dropped, kept))
    assert found.problems == [LineProblem(2, "NaN or Infinity is not a JSON value")]


def test_a_byte_order_mark_is_not_part_of_the_first_line(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + json.dumps(REQUEST).encode())
    assert items(path) == [REQUEST]


def test_a_missing_file_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(PairsFileError, match="cannot read"):
        survey(tmp_path / "absent.jsonl")
    with pytest.raises(PairsFileError):
        survey(tmp_path)


def test_the_upload_body_is_one_json_line_per_item_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairs_file, "BODY_BLOCK_BYTES", 100)
    rows = [REQUEST | {"external_id": f"e{i}"} for i in range(5)]
    path = write(tmp_path, json.dumps(rows[0]), "", *(json.dumps(r) for r in rows[1:]))
    blocks = list(ndjson_body(path))
    assert len(blocks) > 1  # streamed in blocks, not one buffer
    sent = b"".join(blocks)
    assert [json.loads(line) for line in sent.splitlines()] == rows
    assert sent.isascii()  # non-ASCII text travels as JSON escapes


def test_the_upload_body_maps_shared_rows(tmp_path: Path) -> None:
    sent = b"".join(ndjson_body(write(tmp_path, json.dumps(SHARED_ROW))))
    assert json.loads(sent) == request_fields(dict(SHARED_ROW))


def test_a_line_broken_after_the_survey_stops_the_upload(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps(REQUEST), "{broken")
    with pytest.raises(PairsFileError, match="line 2"):
        list(ndjson_body(path))


def test_problems_are_grouped_by_what_is_wrong_in_first_seen_order() -> None:
    problems = [
        LineProblem(7, "Input should be a valid string", "informal"),
        LineProblem(3, "not valid JSON"),
        *(LineProblem(n, "Input should be a valid string", "informal") for n in range(10, 22)),
        LineProblem(None, "too many items"),
    ]
    assert describe_problems(problems) == [
        "lines 7, 10, 11, 12, 13, 14, 15, 16, 17, 18 and 3 more: informal: Input should be a "
        "valid string",
        "line 3: not valid JSON",
        "the batch: too many items",
    ]


def test_intake_errors_are_named_by_the_line_of_their_index(tmp_path: Path) -> None:
    found = survey(write(tmp_path, json.dumps(REQUEST), "", json.dumps(REQUEST)))
    details = [
        {"index": 1, "line": 2, "field": "formal", "code": "payload_too_large", "message": "big"},
        {"index": 9, "field": None, "message": "odd"},
        {"index": 0, "code": "provider_not_configured"},
    ]
    assert found.intake_problems(details) == [
        LineProblem(3, "big", "formal"),
        LineProblem(None, "odd", ""),
        LineProblem(1, "provider_not_configured", ""),
    ]
