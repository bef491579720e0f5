"""lean-2: a Kimina answer is `ok` only when it shows that Lean elaborated the snippet (a
`messages` list; a sorry goal for a snippet that uses `sorry`). An empty `response`, one
missing those keys, or one holding them in another type is `unavailable` with what was
missing (app/lean/body.py, docs/lean.md). lean-1 read each of the empty ones `ok`."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.lean.body import LEAN_READER_VERSION, read_body, uses_sorry
from app.vocabulary import LeanStatus

ID = "s-1"
WITH_SORRY = "import Mathlib\ntheorem t (x : Int) : x = x := by sorry"
PROVED = "theorem t (x : Nat) : x = x := rfl"
WARNING = {
    "severity": "warning",
    "pos": {"line": 2, "column": 8},
    "endPos": {"line": 2, "column": 9},
    "data": "declaration uses `sorry`",
}
SORRY = {"pos": {"line": 2, "column": 36}, "endPos": {"line": 2, "column": 41}, "goal": "⊢ x = x"}
ERROR = {**WARNING, "severity": "error", "data": "Unknown identifier `g`"}


def answer(response: Any) -> str:
    return json.dumps({"results": [{"id": ID, "time": 0.01, "response": response}]})


UNAVAILABLE = {
    "an empty response": ({}, "messages"),
    "only an env": ({"env": 0}, "messages"),
    "sorries without messages": ({"env": 0, "sorries": [SORRY]}, "messages"),
    "messages null": ({"messages": None, "sorries": [SORRY]}, "messages"),
    "messages a string": ({"messages": "none", "sorries": [SORRY]}, "messages"),
    "messages an object": ({"messages": {"0": WARNING}, "sorries": [SORRY]}, "messages"),
    "messages a number": ({"messages": 0, "sorries": [SORRY]}, "messages"),
    "no sorries for a sorry": ({"env": 0, "messages": [WARNING]}, "sorry goal"),
    "sorries empty for a sorry": ({"messages": [WARNING], "sorries": []}, "sorry goal"),
    "sorries null for a sorry": ({"messages": [WARNING], "sorries": None}, "sorry goal"),
    "no messages nor sorries, but []": ({"messages": []}, "sorry goal"),
    "sorries a string": ({"messages": [WARNING], "sorries": "⊢ x = x"}, "sorries"),
    "sorries an object": ({"messages": [WARNING], "sorries": SORRY}, "sorries"),
}


@pytest.mark.parametrize("case", sorted(UNAVAILABLE))
def test_an_answer_that_shows_no_elaboration_is_unavailable_and_says_what_is_missing(
    case: str,
) -> None:
    response, missing = UNAVAILABLE[case]
    reading = read_body(answer(response), ID, WITH_SORRY)
    assert reading.status is LeanStatus.UNAVAILABLE, reading
    assert reading.detail is not None and missing in reading.detail, reading.detail
    assert reading.reader_version == LEAN_READER_VERSION == "lean-2"


def test_a_sorry_with_its_goal_and_its_warning_is_ok() -> None:
    reading = read_body(answer({"messages": [WARNING], "sorries": [SORRY]}), ID, WITH_SORRY)
    assert (reading.status, reading.goal) == (LeanStatus.OK, "⊢ x = x")


def test_an_error_is_an_error_with_no_sorry_reported() -> None:
    # Lean reports no sorry for a declaration that failed: the error decides first.
    assert read_body(answer({"messages": [ERROR]}), ID, WITH_SORRY).status is LeanStatus.ERROR


def test_a_complete_proof_needs_its_messages_list_and_no_sorry() -> None:
    assert read_body(answer({"env": 0, "messages": []}), ID, PROVED).status is LeanStatus.OK
    assert read_body(answer({"env": 0}), ID, PROVED).status is LeanStatus.UNAVAILABLE


@pytest.mark.parametrize(
    ("code", "uses"),
    [
        ("theorem t : 1 = 1 := by sorry", True),
        ("theorem t : 1 = 1 := sorry", True),
        ("theorem t : 1 = 1 := by\n  sorry\n", True),
        ("theorem t : 1 = 1 := by sorry_lemma", False),
        ("theorem t : 1 = 1 := rfl", False),
        ("theorem t : 1 = 1 := rfl -- no sorry here", True),  # the safe side
    ],
)
def test_sorry_is_found_as_a_word(code: str, uses: bool) -> None:
    assert uses_sorry(code) is uses
