"""Reading a Kimina answer (app/lean/body.py): only a well-formed answer for our snippet is
`ok` or `error`; everything else is `timeout` or `unavailable` (fail closed). Recorded
bodies from tests/data/kimina, and hostile variants of them."""

from __future__ import annotations

import json

import pytest

from app.lean.body import read_answer, read_body, snippet_code
from app.vocabulary import LeanStatus, Pair
from tests.support.scripted_kimina import Recorded

ID = "s-1"
# What the recorded answers answered: a statement proved by `sorry`.
CODE = "theorem refl_int (x : Int) : x = x := by sorry"


def body(name: str, edit: tuple[str, str] | None = None) -> str:
    return Recorded(name, edit).body(ID)


def test_a_clean_sorry_is_ok_with_its_goal_and_its_warning() -> None:
    reading = read_body(body("sorry_goal.json"), ID, CODE)
    assert (reading.status, reading.goal, reading.sorries) == (LeanStatus.OK, "x : Int\n⊢ x = x", 1)
    (warning,) = reading.messages
    assert (warning.severity, warning.line, warning.column, warning.end_column) == (
        "warning",
        1,
        8,
        11,
    )


@pytest.mark.parametrize("name", ["unknown_identifier.json", "type_mismatch.json"])
def test_a_message_of_severity_error_is_an_error(name: str) -> None:
    reading = read_body(body(name), ID, CODE)
    assert reading.status is LeanStatus.ERROR
    assert reading.goal is None


def test_an_error_beside_a_sorry_is_still_an_error() -> None:
    data = json.loads(body("sorry_goal.json"))
    data["results"][0]["response"]["messages"][0]["severity"] = "error"
    assert read_body(json.dumps(data), ID, CODE).status is LeanStatus.ERROR


def test_a_timed_out_command_is_a_timeout_and_another_error_string_unavailable() -> None:
    assert read_body(body("timeout.json"), ID, CODE).status is LeanStatus.TIMEOUT
    other = body("timeout.json", ("Lean REPL command timed out in 60.0 seconds", "boom"))
    assert read_body(other, ID, CODE).status is LeanStatus.UNAVAILABLE


HOSTILE = {
    "not json": "<html>502</html>",
    "the REPL's own error": body("repl_error.json"),
    "no results": '{"results":[]}',
    "two results": json.dumps({"results": [json.loads(body("sorry_goal.json"))["results"][0]] * 2}),
    "another snippet": Recorded("sorry_goal.json").body("s-2"),
    "unknown severity": body("unknown_identifier.json", ('"error"', '"fatal"')),
    "a bool for a line": body("unknown_identifier.json", ('"line":1', '"line":true')),
    "a negative column": body("unknown_identifier.json", ('"column":7', '"column":-7')),
    "data not text": body("unknown_identifier.json", ('"Unknown identifier `g`"', "7")),
    "messages not a list": body("unknown_identifier.json", ('"messages":[', '"messages":{"a":[')),
    "no response": '{"results":[{"id":"s-1","time":0.0}]}',
    "a goal not text": body("sorry_goal.json", ('"x : Int\\n⊢ x = x"', "null")),
    "deeply nested": "[" * 100_000 + "]" * 100_000,
    "a list": "[]",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_other_body_is_unavailable(case: str) -> None:
    reading = read_body(HOSTILE[case], ID, CODE)
    assert reading.status is LeanStatus.UNAVAILABLE, reading
    assert reading.detail


@pytest.mark.parametrize(
    ("status", "failure", "expected"),
    [
        (None, "timeout", LeanStatus.TIMEOUT),
        (None, "connection error", LeanStatus.UNAVAILABLE),
        (200, "reply too large", LeanStatus.UNAVAILABLE),
        (401, None, LeanStatus.UNAVAILABLE),
        (429, None, LeanStatus.UNAVAILABLE),
        (500, None, LeanStatus.UNAVAILABLE),
        (200, None, LeanStatus.OK),
    ],
)
def test_the_call_is_read_before_its_body(
    status: int | None, failure: str | None, expected: LeanStatus
) -> None:
    assert read_answer(status, body("sorry_goal.json"), failure, ID, CODE).status is expected


def test_the_snippet_is_the_header_a_newline_and_the_formal_as_submitted() -> None:
    assert snippet_code(Pair("i", "theorem t : 1 = 1 := by sorry", "import Mathlib")) == (
        "import Mathlib\ntheorem t : 1 = 1 := by sorry"
    )
    assert snippet_code(Pair("i", "theorem t : 1 = 1 := by sorry")) == (
        "theorem t : 1 = 1 := by sorry"
    )
