"""app/cli/pairs_file.py: reading pairs files (request lines, shared-data rows with their
labels and source tags, decisions-export rows with their skip rules), line numbers, the
problems report, and the upload body."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli import pairs_file
from app.cli.pairs_file import (
    REQUEST_FIELDS,
    SKIP_NOT_FINAL,
    LineProblem,
    PairLine,
    PairsFileError,
    describe_problems,
    ndjson_body,
    read_pairs,
    request_fields,
    source_tag,
    survey,
)
from app.intake.requests import TAG_PATTERN
from app.models import PairRow, QueueItem, Screening
from app.models.decision import Decision
from app.repositories.decisions import ExportRow
from app.review_queue.export import export_record

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


def test_a_shared_data_row_keeps_the_pair_its_id_as_external_id_and_its_source_as_a_tag() -> None:
    assert request_fields(dict(SHARED_ROW)) == {
        "informal": "n + 0 = n",
        "formal": "theorem t (n : ℕ) : n + 0 = n := sorry",
        "header": "import Mathlib",
        "tags": ["source:miniF2F"],
        "external_id": "minif2f/t",
    }


def test_a_request_line_is_kept_as_it_is() -> None:
    request = REQUEST | {"external_id": "x", "options": {"confirmations": 1}, "header": ""}
    assert request_fields(dict(request)) == request


def test_a_row_with_both_id_and_external_id_keeps_its_external_id_and_ignores_id(
    tmp_path: Path,
) -> None:
    row = REQUEST | {"id": "a", "external_id": "b", "why": "w"}
    assert request_fields(dict(row)) == REQUEST | {"external_id": "b"}
    found = survey(write(tmp_path, json.dumps(row), json.dumps(row | {"why": None})))
    assert found.problems == []
    assert found.ignored == {"id": 2, "why": 2}


def test_a_shared_data_row_names_the_fields_it_drops(tmp_path: Path) -> None:
    found = survey(write(tmp_path, json.dumps(SHARED_ROW)))
    assert set(found.ignored) == set(SHARED_ROW) - {*REQUEST_FIELDS, "id", "source"}
    assert "id" not in found.ignored and "source" not in found.ignored


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


def test_a_line_with_an_empty_statement_is_refused_in_the_api_s_words(tmp_path: Path) -> None:
    found = survey(write(tmp_path, json.dumps(REQUEST | {"formal": ""})))
    assert describe_problems(found.problems) == ["line 1: formal: must not be empty"]


def test_intake_errors_are_named_by_the_line_of_their_index(tmp_path: Path) -> None:
    found = survey(write(tmp_path, json.dumps(REQUEST), "", json.dumps(REQUEST)))
    details: list[dict[str, Any]] = [
        {"index": 1, "line": 2, "field": "formal", "code": "payload_too_large", "message": "big"},
        {"index": 9, "field": None, "message": "odd"},
        {"index": 0, "code": "provider_not_configured"},
    ]
    assert found.intake_problems(details) == [
        LineProblem(3, "big", "formal"),
        LineProblem(None, "odd", ""),
        LineProblem(1, "provider_not_configured", ""),
    ]


# --- Shared rows: labels, tags, replies, options, and the source as a tag ----------------------

# Read from the shared data beside the repository, never copied into it.
LABELLED_SET = Path(__file__).resolve().parents[2].parent / "shared/data/labelled/dev.jsonl"
needs_labelled_set = pytest.mark.skipif(
    not LABELLED_SET.is_file(), reason="the shared labelled set is not on this machine"
)


def labelled_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in LABELLED_SET.read_text().splitlines()]


@needs_labelled_set
def test_every_labelled_set_row_is_a_request_with_its_label_and_source_tag() -> None:
    rows = labelled_rows()
    found = survey(LABELLED_SET)
    assert (found.problems, found.skipped) == ([], {})
    assert found.total == len(rows) and found.line_numbers == list(range(1, len(rows) + 1))
    sent = items(LABELLED_SET)
    for row, item in zip(rows, sent, strict=True):
        assert item["label"] == row["label"] in {"faithful", "mismatch"}
        assert item["external_id"] == row["id"]
        assert item["tags"] == [source_tag(row["source"])]
        assert set(item) == {"informal", "formal", "header", "label", "tags", "external_id"}
    assert {item["label"] for item in sent} == {"faithful", "mismatch"}


@needs_labelled_set
def test_a_labelled_set_source_becomes_a_tag_of_the_tag_alphabet() -> None:
    by_source = {row["source"]: request_fields(row) for row in labelled_rows()}
    odd = "DeepSeek-Prover-V1.5 datasets/minif2f.jsonl (issue #26)"
    assert by_source[odd]["tags"] == [
        "source:DeepSeek-Prover-V1.5-datasets/minif2f.jsonl--issue--26-"
    ]
    assert by_source["miniF2F-lean4 fix history"]["tags"] == ["source:miniF2F-lean4-fix-history"]


@pytest.mark.parametrize(
    ("source", "tag"),
    [
        ("miniF2F", "source:miniF2F"),
        ("a b\tc", "source:a-b-c"),
        ("Lean 4 — ℕ", "source:Lean-4----"),  # one `-` per character, not per byte
        ("😀x", "source:-x"),
        ("keep_.:/-AZaz09", "source:keep_.:/-AZaz09"),
        ("\ud800", "source:-"),  # a lone surrogate, as JSON may escape one
        ("x" * 100, "source:" + "x" * 57),  # cut to 64 characters in all
    ],
)
def test_a_source_tag_replaces_every_character_outside_the_alphabet_and_is_cut_to_64(
    source: str, tag: str
) -> None:
    assert source_tag(source) == tag
    assert len(source_tag(source)) <= 64


@given(st.text(max_size=200))
def test_every_source_tag_is_a_valid_tag(source: str) -> None:
    """The alphabet here and the request schema's TAG_PATTERN cannot drift apart."""
    tag = source_tag(source)
    assert tag.startswith("source:") and re.fullmatch(TAG_PATTERN, tag)


def test_a_shared_row_keeps_label_tags_replies_and_options() -> None:
    replies = {"translator": "VERDICT: FAITHFUL", "judge": "VERDICT: FAITHFUL"}
    row = SHARED_ROW | {
        "label": "faithful",
        "tags": ["split/dev"],
        "replies": replies,
        "options": {"confirmations": 1},
        "why": "dropped",
        "confidence": "high",
    }
    assert request_fields(dict(row)) == {
        "informal": row["informal"],
        "formal": row["formal"],
        "header": row["header"],
        "label": "faithful",
        "tags": ["split/dev", "source:miniF2F"],
        "replies": replies,
        "options": {"confirmations": 1},
        "external_id": "minif2f/t",
    }


def test_the_source_tag_is_not_duplicated_nor_a_seventeenth_tag() -> None:
    there = SHARED_ROW | {"tags": ["source:miniF2F", "a"]}
    assert request_fields(dict(there))["tags"] == ["source:miniF2F", "a"]
    full = [f"t{n}" for n in range(16)]
    assert request_fields(SHARED_ROW | {"tags": full})["tags"] == full  # its own tags win
    assert request_fields(SHARED_ROW | {"tags": full[:15]})["tags"] == [
        *full[:15],
        "source:miniF2F",
    ]


def test_a_shared_row_without_a_usable_source_gets_no_tag() -> None:
    for source in (None, "", 7, ["miniF2F"]):
        assert "tags" not in request_fields(SHARED_ROW | {"source": source}), source
    assert "tags" not in request_fields({k: v for k, v in SHARED_ROW.items() if k != "source"})


def test_a_shared_row_with_bad_label_or_tags_is_reported_by_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(SHARED_ROW | {"label": "unclear"}),
        json.dumps(SHARED_ROW | {"tags": "split/dev"}),  # not a list: kept so it is named
        json.dumps(SHARED_ROW | {"tags": ["ok", "has space"]}),
    )
    found = survey(path)
    assert [(p.number, p.field) for p in found.problems] == [
        (1, "label"),
        (2, "tags"),
        (3, "tags.1"),
    ]


# --- Decisions-export rows -----------------------------------------------------------------

DECIDED_AT = datetime(2026, 12, 1, tzinfo=UTC)


def export_row(
    decision_id: int,
    decision: str,
    n: int = 0,
    *,
    superseded: bool = False,
    withdrawn: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    """A line of GET /v1/decisions/export, made by the export's own export_record; `n`
    picks the pair, `extra` overrides fields of the line."""
    record = export_record(
        ExportRow(
            Decision(
                id=decision_id,
                kind="decision",
                decision=decision,
                defects=[],
                blind=False,
                note="why",
                actor="alice",
                actor_role="reviewer",
                created_at=DECIDED_AT,
            ),
            QueueItem(id=100 + decision_id, audit=False),
            Screening(
                id=f"screening-{decision_id}",
                external_id=f"pair-{n}",
                batch_id=None,
                outcome="needs_review",
                reasons=["translator_missing"],
                policy_version="policy-1",
            ),
            PairRow(
                informal=f"n + {n} = {n} + n", formal=f"theorem t{n} : n + {n} = {n} + n", header=""
            ),
            superseded,
            withdrawn,
        )
    )
    return record | extra


def test_an_export_row_becomes_its_pair_with_the_decision_as_label() -> None:
    row = export_row(1, "mismatch", 3)
    assert request_fields(dict(row)) == {
        "informal": "n + 3 = 3 + n",
        "formal": "theorem t3 : n + 3 = 3 + n",
        "header": "",
        "external_id": "pair-3",
        "label": "mismatch",
    }
    assert set(row) >= {"decision_id", "screening_id", "superseded"}  # what tells it apart


def test_superseded_withdrawn_and_unsure_rows_are_skipped_not_invalid(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(export_row(1, "mismatch", 0, superseded=True)),
        json.dumps(export_row(2, "faithful", 1)),
        json.dumps(export_row(3, "faithful", 2, withdrawn=True)),
        "",
        json.dumps(export_row(4, "unsure", 3)),
        json.dumps(export_row(5, "mismatch", 4, withdrawn=False)),
    )
    found = survey(path)
    assert found.problems == []
    assert found.skipped == {1: "superseded", 3: "withdrawn", 5: "unsure"}
    assert found.line_numbers == [2, 6]
    assert [(i["external_id"], i["label"]) for i in sent_items(path, found)] == [
        ("pair-1", "faithful"),
        ("pair-4", "mismatch"),
    ]


def test_only_the_last_current_decision_on_a_pair_becomes_an_item(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(export_row(1, "mismatch", 0)),
        json.dumps(export_row(2, "faithful", 1)),
        json.dumps(export_row(3, "faithful", 0)),  # pair 0 again: this one is final...
        json.dumps(export_row(4, "mismatch", 0, superseded=True)),  # ...not a set-aside one
        json.dumps(export_row(5, "unsure", 0)),  # ...nor one that decides nothing
        json.dumps(REQUEST),  # a request line is never merged with decisions
        json.dumps(REQUEST),
    )
    found = survey(path)
    assert found.skipped == {
        1: "a later decision on the same pair",
        4: "superseded",
        5: "unsure",
    }
    assert found.line_numbers == [2, 3, 6, 7]
    assert [(i.get("external_id"), i.get("label")) for i in sent_items(path, found)] == [
        ("pair-1", "faithful"),
        ("pair-0", "faithful"),
        (None, None),
        (None, None),
    ]


def test_the_same_pair_is_the_same_informal_formal_and_header(tmp_path: Path) -> None:
    first = export_row(1, "mismatch", 0)
    path = write(
        tmp_path,
        json.dumps(first),
        json.dumps(first | {"decision_id": 2, "header": "import Mathlib"}),
        json.dumps(first | {"decision_id": 3, "external_id": "another id, same pair"}),
    )
    found = survey(path)
    assert found.line_numbers == [2, 3] and found.skipped == {1: SKIP_NOT_FINAL}


def test_a_dropped_decision_takes_its_problems_with_it(tmp_path: Path) -> None:
    bad = export_row(1, "mismatch", 0) | {"external_id": 7}
    path = write(tmp_path, json.dumps(bad), json.dumps(export_row(2, "faithful", 0)))
    found = survey(path)
    assert (found.problems, found.line_numbers) == ([], [2])


def test_an_export_row_with_an_unreadable_decision_or_flag_is_reported(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(export_row(1, "maybe")),
        json.dumps(export_row(2, "faithful") | {"superseded": "no"}),
        json.dumps(export_row(3, "faithful") | {"withdrawn": 1}),
        json.dumps({k: v for k, v in export_row(4, "faithful").items() if k != "informal"}),
    )
    found = survey(path)
    assert [(p.number, p.field) for p in found.problems] == [
        (1, "decision"),
        (2, "superseded"),
        (3, "withdrawn"),
        (4, "informal"),
    ]
    assert "unsure" in found.problems[0].message


def test_intake_errors_are_named_by_line_past_skipped_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(export_row(1, "mismatch", 0)),
        json.dumps(export_row(2, "unsure", 1)),
        json.dumps(export_row(3, "faithful", 2)),
        json.dumps(export_row(4, "faithful", 0)),
    )
    found = survey(path)
    sent = sent_items(path, found)
    assert [i["external_id"] for i in sent] == ["pair-2", "pair-0"]
    # What the intake reports by index names the line the item came from.
    assert found.intake_problems([{"index": 0, "message": "a"}, {"index": 1, "message": "b"}]) == [
        LineProblem(3, "a"),
        LineProblem(4, "b"),
    ]


def test_a_mixed_file_reads_every_shape(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        json.dumps(REQUEST | {"label": "faithful", "tags": ["mine"]}),
        json.dumps(SHARED_ROW | {"label": "mismatch"}),
        "",
        json.dumps(export_row(1, "faithful", 5)),
        json.dumps(export_row(2, "mismatch", 6, superseded=True)),
    )
    found = survey(path)
    assert (found.problems, found.line_numbers, found.skipped) == ([], [1, 2, 4], {5: "superseded"})
    sent = sent_items(path, found)
    assert [(i.get("external_id"), i["label"], i.get("tags")) for i in sent] == [
        (None, "faithful", ["mine"]),
        ("minif2f/t", "mismatch", ["source:miniF2F"]),
        ("pair-5", "faithful", None),
    ]
    assert items(path) == sent  # read_pairs with no survey surveys first, and agrees


def test_a_decision_made_final_or_not_since_the_survey_stops_the_upload(tmp_path: Path) -> None:
    lines = [json.dumps(export_row(1, "mismatch", 0)), json.dumps(export_row(2, "faithful", 1))]
    path = write(tmp_path, *lines)
    found = survey(path)
    write(tmp_path, lines[0], json.dumps(export_row(2, "unsure", 1)))  # one item fewer
    with pytest.raises(PairsFileError, match="line 2"):
        list(ndjson_body(path, found))
    found = survey(path)
    write(tmp_path, *lines)  # one item more, on a line the survey skipped
    with pytest.raises(PairsFileError, match="changed while it was read"):
        list(ndjson_body(path, found))


def sent_items(path: Path, found: pairs_file.Survey) -> list[dict[str, Any]]:
    """What the upload body sends, item by item."""
    return [json.loads(line) for line in b"".join(ndjson_body(path, found)).splitlines()]


# --- skip_invalid -------------------------------------------------------------------------


def mixed_valid_and_invalid(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        json.dumps(REQUEST | {"external_id": "a"}),
        "{not json",
        "",
        json.dumps({"informal": "no formal"}),
        json.dumps(REQUEST | {"external_id": "b"}),
        b"\xff{}",
        json.dumps(SHARED_ROW),
    )


def test_skip_invalid_leaves_every_invalid_line_out_and_keeps_its_problems(
    tmp_path: Path,
) -> None:
    found = survey(mixed_valid_and_invalid(tmp_path), skip_invalid=True)
    assert found.problems == []
    assert found.line_numbers == [1, 5, 7]
    assert [(p.number, p.field) for p in found.left_out] == [(2, ""), (4, "formal"), (6, "")]
    assert found.left_out_lines == 3
    # Without it the survey is as it always was: every problem, every line an item.
    plain = survey(mixed_valid_and_invalid(tmp_path))
    assert [p.number for p in plain.problems] == [2, 4, 6]
    assert plain.line_numbers == [1, 4, 5, 7] and plain.left_out == []


def test_skip_invalid_sends_and_reads_the_valid_lines_only(tmp_path: Path) -> None:
    path = mixed_valid_and_invalid(tmp_path)
    found = survey(path, skip_invalid=True)
    sent = [json.loads(line) for line in b"".join(ndjson_body(path, found)).splitlines()]
    assert [item["external_id"] for item in sent] == ["a", "b", "minif2f/t"]
    read = [line for line in read_pairs(path, found)]
    assert all(isinstance(line, PairLine) for line in read)
    assert [line.number for line in read] == found.line_numbers


def test_skip_invalid_intake_errors_are_named_by_the_lines_sent(tmp_path: Path) -> None:
    found = survey(mixed_valid_and_invalid(tmp_path), skip_invalid=True)
    details = [{"index": 1, "field": "formal", "message": "too long"}, {"index": 2}]
    assert [p.number for p in found.intake_problems(details)] == [5, 7]


def test_skip_invalid_on_a_file_of_invalid_lines_leaves_no_item(tmp_path: Path) -> None:
    found = survey(write(tmp_path, "{", "[]", json.dumps({"formal": "x"})), skip_invalid=True)
    assert found.total == 0 and found.left_out_lines == 3


def test_skip_invalid_names_the_left_out_lines_with_a_count(tmp_path: Path) -> None:
    found = survey(mixed_valid_and_invalid(tmp_path), skip_invalid=True)
    described = pairs_file.describe_left_out(found)
    assert described is not None
    assert described.startswith("left out 3 invalid lines:")
    assert "line 4: formal: Field required" in described
    assert pairs_file.describe_left_out(survey(write(tmp_path, json.dumps(REQUEST)))) is None
