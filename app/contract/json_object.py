"""Reading the reply object of the `tool` and `json` formats, strictly. Pure.

One text in (a tool call's arguments, or a reply's content), a `Reading` out. The rules
(shared by `tool-1` and `json-1`; docs/contract.md lists them with the rest):

1. The text is exactly one JSON document (RFC 8259, JSON whitespace around it allowed):
   no code fence, no prose before or after, no raw control character inside a string,
   no `NaN`/`Infinity`. Otherwise `invalid`.
2. Every object in it, at any depth, names each key once (after unescaping: `"verdict"`
   and `"\\u0076erdict"` are one key). A key twice: `invalid` (JSON leaves its meaning
   open: Python keeps the last value, other readers the first).
3. The document is an object. Otherwise `invalid`.
4. A key that is not one of the role's fields: `invalid` (extra keys).
5. A field of the role missing: `missing`.
6. A field whose value is not a string, or a `verdict` that is not exactly `FAITHFUL`,
   `MISMATCH` or `UNCLEAR` (case and all, no surrounding whitespace): `invalid`.
7. Otherwise `ok` with that verdict. The text fields are kept exactly as written (never
   stripped) whenever they are strings, in every status, so a person can read them; they
   never influence the verdict.
"""

from __future__ import annotations

import json
from typing import Any

from app.contract.reading import Reading
from app.contract.reply_schema import BACK_TRANSLATION, ISSUES, VERDICT, VERDICT_WORDS, reply_fields
from app.vocabulary import ParseStatus, Role, Verdict


class _Unreadable(ValueError):
    """The text is not one JSON document with unique keys (rules 1 and 2)."""


def read_object(text: str, role: Role, version: str) -> Reading:
    """Read one reply object under the rules above. Never raises for any `str`."""
    try:
        document = _strict_json(text)
    except _Unreadable:
        return _reading(ParseStatus.INVALID, {}, version)
    if not isinstance(document, dict):
        return _reading(ParseStatus.INVALID, {}, version)
    return _reading(_status_of(document, role), document, version)


def _strict_json(text: str) -> Any:
    try:
        return json.loads(
            text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, strict=True
        )
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise _Unreadable(str(exc)) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise _Unreadable("a key is named twice")
    return members


def _no_constant(name: str) -> Any:
    raise _Unreadable(f"{name} is not JSON")


def _status_of(document: dict[str, Any], role: Role) -> ParseStatus:
    fields = reply_fields(role)
    if any(key not in fields for key in document):
        return ParseStatus.INVALID
    if any(name not in document for name in fields):
        return ParseStatus.MISSING
    if not all(isinstance(document[name], str) for name in fields):
        return ParseStatus.INVALID
    if document[VERDICT] not in VERDICT_WORDS:
        return ParseStatus.INVALID
    return ParseStatus.OK


def _reading(status: ParseStatus, document: dict[str, Any], version: str) -> Reading:
    verdict = VERDICT_WORDS[document[VERDICT]] if status is ParseStatus.OK else Verdict.UNCLEAR
    return Reading(
        verdict=verdict,
        parse_status=status,
        back_translation=text_field(document, BACK_TRANSLATION),
        issues=text_field(document, ISSUES),
        parser_version=version,
    )


def text_field(document: dict[str, Any], name: str) -> str | None:
    value = document.get(name)
    return value if isinstance(value, str) else None
