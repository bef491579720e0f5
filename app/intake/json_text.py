"""Parsing a JSON request body, refusing one that nests deeper than any request needs.

A valid request nests three levels (a batch five); 64 leaves room for any client while a
hostile body of a thousand brackets, which costs the parser and every later walk over the
value a frame per level, is a 400 `malformed_json` and never a RecursionError (a 500).
"""

from __future__ import annotations

import json
from typing import Any

from app.errors import AppError

MAX_JSON_DEPTH = 64


class MalformedJson(AppError):
    def __init__(self, why: str) -> None:
        super().__init__(400, "malformed_json", f"the request body is not valid JSON: {why}")


TOO_DEEP = f"it nests deeper than {MAX_JSON_DEPTH} levels"


def parse_json(data: bytes | bytearray) -> Any:
    """The parsed value; MalformedJson for invalid JSON or JSON nested too deep."""
    try:
        value = json.loads(data)
    except RecursionError as error:  # deeper than the interpreter's stack allows
        raise MalformedJson(TOO_DEEP) from error
    except ValueError as error:  # JSONDecodeError, and bytes that are not UTF-8/16/32
        raise MalformedJson(str(error)) from error
    if _nests_deeper(value, MAX_JSON_DEPTH):
        raise MalformedJson(TOO_DEEP)
    return value


def nests_too_deep(data: bytes | bytearray) -> bool:
    """Whether `data` nests deeper than MAX_JSON_DEPTH. Invalid JSON is left to the
    caller's own parser to report, unless its brackets alone overflow the stack."""
    # Nesting takes brackets: most texts have too few to need parsing at all.
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return False
    try:
        return _nests_deeper(json.loads(data), MAX_JSON_DEPTH)
    except RecursionError:
        return True
    except ValueError:
        return False


_CONTAINERS = (dict, list)


def _nests_deeper(value: Any, limit: int) -> bool:
    """Walked level by level, not by recursion (the walk must not fail where the parser
    did not); a plain loop, as it visits every value of a 64 MiB batch."""
    level = [value] if isinstance(value, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        below: list[Any] = []
        keep = below.append
        for node in level:
            for child in node.values() if type(node) is dict else node:
                if isinstance(child, _CONTAINERS):
                    keep(child)
        level = below
    return False
