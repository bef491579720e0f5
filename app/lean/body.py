"""Reading a Kimina Lean Server's answer to `POST /api/check`. Pure.

Kimina (project-numina/kimina-lean-server, server/routers/check.py) answers
`{"results": [{"id", "time", "error"?, "response"?}]}`, one result per snippet, with the
Lean REPL's command response as `response`: `{"messages": [{"severity", "pos", "endPos",
"data"}], "sorries": [{"pos", "endPos", "goal"}], "env"}`, or `{"message"}` when the REPL
itself failed. Fields that are None are left out (`response_model_exclude_none`).

Fail closed: only a well-formed answer for our snippet is `ok` or `error`. A message of
severity `error` makes it `error`; an `error` string saying "timed out" (Kimina's own rule,
kimina_client SnippetStatus) is `timeout`; anything else (another error string, the REPL's
`{"message"}`, a shape we do not know, a severity we do not know, a status that is not a
success, no body) is `unavailable`.

`ok` needs the answer to show that Lean elaborated the snippet (lean-2): the response holds
a `messages` list, and a snippet that uses `sorry` has at least one sorry with its goal
(Lean reports the goal of every `sorry` it elaborates, and warns "declaration uses
`sorry`"). The REPL leaves empty lists out, so `{}` (or `{"env": 0}`) says nothing was
elaborated that we can see: `unavailable`, with what was missing, never `ok`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from app.lean.call import LeanCall
from app.outside_text import LONE_SURROGATE
from app.vocabulary import LeanStatus, Pair

# Which rules read a body into a status: stored on each check, counted by a re-score (a
# stored body read again under a newer version may move its screening). Bumped whenever a
# body would read differently.
LEAN_READER_VERSION = "lean-2"
SEVERITIES = frozenset({"trace", "info", "warning", "error"})
_TIMEOUT_FAILURE = "timeout"
# `sorry` as a word of the snippet (in a comment too: then a sorry goal is asked for and
# its absence reads `unavailable`, the safe side).
_SORRY = re.compile(r"(?<![\w.'])sorry(?![\w'])")


class MalformedAnswer(Exception):
    """The body is not an answer of Kimina's shape for our snippet."""


@dataclass(frozen=True, slots=True)
class LeanMessage:
    """One Lean message; lines are 1-based and columns 0-based, in the snippet sent."""

    severity: str
    line: int
    column: int
    end_line: int | None
    end_column: int | None
    data: str

    def as_json(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "data": self.data,
        }


@dataclass(frozen=True, slots=True)
class LeanReading:
    status: LeanStatus
    messages: tuple[LeanMessage, ...] = ()
    # The first sorry's goal: the statement as Lean elaborated it (coercions shown).
    goal: str | None = None
    # Why it is not `ok` or `error`, in a sentence (the server's error string, say).
    detail: str | None = None
    sorries: int = 0
    reader_version: str = LEAN_READER_VERSION


def snippet_code(pair: Pair) -> str:
    """What is sent: the header, then the formal statement as submitted."""
    return f"{pair.header}\n{pair.formal}" if pair.header else pair.formal


def read_call(call: LeanCall) -> LeanReading:
    return read_answer(call.http_status, call.raw_body, call.failure, call.snippet_id, call.code)


def read_answer(
    http_status: int | None,
    raw_body: str | None,
    failure: str | None,
    snippet_id: str,
    code: str,
) -> LeanReading:
    """The reading of a stored or fresh check of `code`: the call's outcome first, then
    the body."""
    if failure == _TIMEOUT_FAILURE:
        return LeanReading(LeanStatus.TIMEOUT, detail="no answer within the client's deadline")
    if failure is not None or http_status is None or raw_body is None:
        return _unavailable(failure or "no response")
    if not 200 <= http_status <= 299:
        return _unavailable(f"HTTP {http_status}")
    return read_body(raw_body, snippet_id, code)


def read_body(raw_body: str, snippet_id: str, code: str) -> LeanReading:
    """The reading of a success's body, the answer to a check of `code`."""
    if LONE_SURROGATE.search(raw_body):
        # Bytes that were not UTF-8 (the client keeps them as lone surrogates): JSON is
        # UTF-8, so this is not an answer we can trust, whatever its parse would say.
        return _unavailable("the body is not UTF-8")
    try:
        return _read(json.loads(raw_body), snippet_id, uses_sorry(code))
    except (ValueError, RecursionError):
        return _unavailable("the body is not JSON")
    except MalformedAnswer as error:
        return _unavailable(f"the body is not a Kimina answer: {error}")


def uses_sorry(code: str) -> bool:
    return _SORRY.search(code) is not None


def _read(data: Any, snippet_id: str, sorry: bool) -> LeanReading:
    result = _one_result(data, snippet_id)
    error = result.get("error")
    if error is not None:
        text = _text(error, "error")
        status = LeanStatus.TIMEOUT if "timed out" in text else LeanStatus.UNAVAILABLE
        return LeanReading(status, detail=text)
    response = result.get("response")
    if not isinstance(response, dict):
        raise MalformedAnswer("no response")
    if "message" in response and "messages" not in response:
        return _unavailable(f"the REPL failed: {_text(response['message'], 'message')}")
    if not isinstance(response.get("messages"), list):
        raise MalformedAnswer("the response holds no messages list")
    messages = tuple(_message(m) for m in response["messages"])
    goals = [_goal(s) for s in _list(response.get("sorries"), "sorries")]
    goal = goals[0] if goals else None
    if any(m.severity == "error" for m in messages):
        return LeanReading(LeanStatus.ERROR, messages, goal, sorries=len(goals))
    if sorry and not goals:
        raise MalformedAnswer("the snippet uses sorry and the response reports no sorry goal")
    return LeanReading(LeanStatus.OK, messages, goal, sorries=len(goals))


def _one_result(data: Any, snippet_id: str) -> dict[str, Any]:
    results = data.get("results") if isinstance(data, dict) else None
    if not isinstance(results, list) or len(results) != 1 or not isinstance(results[0], dict):
        raise MalformedAnswer("not exactly one result")
    if results[0].get("id") != snippet_id:
        raise MalformedAnswer("the result is for another snippet")
    return results[0]


def _message(value: Any) -> LeanMessage:
    if not isinstance(value, dict):
        raise MalformedAnswer("a message is not an object")
    severity = value.get("severity")
    if severity not in SEVERITIES:
        raise MalformedAnswer(f"unknown severity {str(severity)[:32]!r}")
    line, column = _position(value.get("pos"), "pos")
    end = value.get("endPos")
    end_line, end_column = (None, None) if end is None else _position(end, "endPos")
    data = _text(value.get("data"), "data")
    return LeanMessage(severity, line, column, end_line, end_column, data)


def _goal(value: Any) -> str:
    if not isinstance(value, dict):
        raise MalformedAnswer("a sorry is not an object")
    return _text(value.get("goal"), "goal")


def _position(value: Any, name: str) -> tuple[int, int]:
    if not isinstance(value, dict):
        raise MalformedAnswer(f"{name} is not an object")
    line, column = value.get("line"), value.get("column")
    # bool is an int to Python, never a position to Lean.
    if type(line) is not int or type(column) is not int or line < 0 or column < 0:
        raise MalformedAnswer(f"{name} has no line and column")
    return line, column


def _list(value: Any, name: str) -> list[Any]:
    if value is None:  # the REPL leaves an empty list out
        return []
    if not isinstance(value, list):
        raise MalformedAnswer(f"{name} is not a list")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise MalformedAnswer(f"{name} is not a string")
    return value


def _unavailable(detail: str) -> LeanReading:
    return LeanReading(LeanStatus.UNAVAILABLE, detail=detail)
