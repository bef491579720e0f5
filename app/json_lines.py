"""Writing one JSON value as one JSONL line that every reader splits in the same place.

JSON lets U+2028, U+2029 and U+0085 stand unescaped inside a string, but many line readers
(Python's `str.splitlines`, httpx's `iter_lines`, editors, JavaScript tools) end a line
there: a result whose `external_id` holds one would reach them as two physical lines,
neither of them JSON. Every JSONL line the project writes goes through `json_line`, which
writes those three as `\\u` escapes, so a line ends only at its b"\\n".

A top-level module, not part of app/intake, because writers on every side of the data flow
(the API, the CLI, the review export) use it.
"""

from __future__ import annotations

import json
from typing import Any

# Line separators outside ASCII, as UTF-8 bytes and as the JSON escape that stands for
# the same character. In valid UTF-8 these bytes can only be that character, and outside
# a JSON string only ASCII whitespace may stand, so a byte replace is exact.
_LINE_BREAKS = (
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
    (b"\xc2\x85", b"\\u0085"),
)


def json_line(value: Any) -> bytes:
    """`value` as one UTF-8 JSONL line (b"\\n" included), with no line break inside it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    # A lone surrogate can only sit inside a JSON string, where backslashreplace writes it
    # as the very "\\ud800" escape it was read from.
    return json_line_of(text.encode("utf-8", "backslashreplace"))


def json_line_of(encoded: bytes) -> bytes:
    """One line of JSON already serialised as UTF-8 (by pydantic, by a server), its line
    breaks other than b"\\n" escaped and b"\\n" appended."""
    for raw, escaped in _LINE_BREAKS:
        if raw in encoded:
            encoded = encoded.replace(raw, escaped)
    return encoded + b"\n"
