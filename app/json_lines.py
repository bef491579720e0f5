"""Writing JSON that every line reader splits in the same place and no terminal obeys.

JSON lets U+2028, U+2029 and U+0085 stand unescaped inside a string, but many line readers
(Python's `str.splitlines`, httpx's `iter_lines`, editors, JavaScript tools) end a line
there: a result whose `external_id` holds one would reach them as two physical lines,
neither of them JSON. JSON also lets a string carry DEL, the C1 controls (U+0080-U+009F,
U+009B being a terminal's CSI) and the bidirectional controls raw, and results go to
stdout, often a terminal. Every JSON line the project writes (and the JSON a command
prints) goes through this module, which writes those characters as `\\u` escapes: the
same value for any JSON reader, one line for every line reader, inert on a terminal.

A top-level module, not part of app/intake, because writers on every side of the data flow
(the API, the CLI, the review export) use it.
"""

from __future__ import annotations

import json
import re
from typing import Any

# As UTF-8 bytes: DEL; C1 (U+0080-U+009F, U+0085 NEL among them); U+061C; U+200E-U+200F;
# U+2028-U+202E (the line and paragraph separators, then the embeddings and overrides);
# U+2066-U+2069 (the isolates). In valid UTF-8 these bytes can only be those characters,
# and outside a JSON string only ASCII may stand, so replacing bytes is exact.
_UNSAFE = re.compile(
    rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _escape(found: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(found[0].decode("utf-8"))


def escaped(encoded: bytes) -> bytes:
    """UTF-8 JSON with every character above written as its `\\u` escape."""
    return _UNSAFE.sub(_escape, encoded)


def json_line_of(encoded: bytes) -> bytes:
    """One line of JSON already serialised as UTF-8 (by pydantic, by a server), escaped,
    with b"\\n" appended."""
    return escaped(encoded) + b"\n"


def json_line(value: Any) -> bytes:
    """`value` as one UTF-8 JSONL line (b"\\n" included), with no line break inside it."""
    return json_line_of(_encoded(json.dumps(value, ensure_ascii=False, separators=(",", ":"))))


def json_text(value: Any, indent: int = 2) -> str:
    """`value` as indented JSON to print: non-ASCII text kept readable, the characters
    above escaped."""
    return escaped(_encoded(json.dumps(value, ensure_ascii=False, indent=indent))).decode()


def _encoded(text: str) -> bytes:
    # A lone surrogate can only sit inside a JSON string, where backslashreplace writes it
    # as the very "\ud800" escape it was read from.
    return text.encode("utf-8", "backslashreplace")
