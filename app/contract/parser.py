"""The reply contract: how a verdict and the two text fields are read from one reply.

Pure: plain strings in, a `Reading` out; no database, no HTTP, no framework imports.

The rules (`PARSER_VERSION` changes whenever any reply, or any call's ending (`call.py`),
could be read differently):

1. Lines end at LF; CRLF is accepted as a line end. A carriage return not immediately
   followed by a line feed, anywhere, gives status `bare_cr` (verdict `unclear`): some
   readers would see a line end there and we would not, so the reply is ambiguous.
2. A field is a line that begins, after optional horizontal whitespace, with its name and a
   colon: `VERDICT:`, `BACK-TRANSLATION:` or `ISSUES:`. Horizontal whitespace is every
   character `str.isspace()` accepts except CR and LF (so TAB, VT, FF, U+0085, U+00A0,
   U+2028, U+2029, U+3000, ... sit *inside* a line; rule 7 also ends lines at some). Names
   match in any ASCII letter case only: `verdıct:` (dotless i) or a Kelvin sign in `BACK-`
   are not field names, although Python's Unicode case folding would accept them.
3. A verdict value is the rest of its line, stripped of whitespace and lowercased. No
   verdict field: `missing`. Any value outside {faithful, mismatch, unclear} (including
   the empty value of a bare `VERDICT:`): `invalid`. All values valid but not all equal:
   `conflicting`. Otherwise `ok` with that verdict; agreeing repeats are fine.
4. Every status but `ok` gives verdict `unclear`; `ok` + `unclear` is the model's own doubt.
5. Nothing else is a verdict: not a match inside a line, not a prefix (`FAITHFULNESS`), not
   a menu, not markup (`**VERDICT:** X` is no field; `VERDICT: **X**` is invalid), and
   there is no first- or last-match choice. Lines inside a code block are lines like any
   other: a fenced `VERDICT:` line counts.
6. `BACK-TRANSLATION:` and `ISSUES:` hold the text after their colon and every following
   line up to the next field line (any of the three names), with CRLF turned into LF and
   surrounding whitespace stripped. An absent field is `None`; a present but empty one is
   `""`. Repeated blocks of one field are joined, in order, with a blank line, leaving out
   empty blocks, so nothing the model wrote is dropped. Text before the first field and
   lines after a verdict line belong to no field. In a `bare_cr` reply the fields are
   still read (lines split at LF only, the bare CR kept as text) so a person can see them.
   These fields never influence the verdict.
7. When rules 1-4 give `ok`, the reply is read a second, lenient way (`lenient.py`: NFKC,
   format characters removed, a line end at every Unicode line break, whitespace allowed
   between `VERDICT` and its colon, the name still in ASCII letters only). If that reading
   finds a different sequence of verdict values (a `VERDICT: MISMATCH` after a U+2028, or
   behind a zero-width space, or written `VERDICT : MISMATCH` or with a fullwidth colon),
   the status is `ambiguous` (verdict `unclear`): a person would read the reply otherwise.
   A reply the strict reading finds unreadable keeps its status; the text fields are
   always those of the strict reading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.contract.lenient import lenient_verdict_values
from app.contract.reading import Reading
from app.vocabulary import ParseStatus, Verdict

# contract-4: a reply asked for as text that holds a tool call is `invalid` (call.py), where
# contract-3 read its content alone. contract-3: a provider's reply is read only after a
# finish reason listed as a completion; contract-2 read every reason but `length` and
# `content_filter` as complete.
PARSER_VERSION = "contract-4"

# Every character str.isspace() accepts except "\r" and "\n"; a test checks this against
# all of Unicode, so a Python upgrade that changes the set cannot go unnoticed.
HORIZONTAL_WHITESPACE = (
    "\t\x0b\x0c\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

VERDICT_FIELD = "verdict"
BACK_TRANSLATION_FIELD = "back_translation"
ISSUES_FIELD = "issues"

# A field line starts at the start of the text or right after "\n" (never after "\r",
# U+0085 or U+2028). Searching for the literal "\n" lets the regex engine skip ahead with
# a fast scan instead of trying a match at every position, as `^` with MULTILINE would.
# ASCII keeps IGNORECASE from folding `ı`, `ſ` or the Kelvin sign into the names, and the
# possessive `*+` cannot backtrack, so a long whitespace run costs one pass.
_FIELD_NAME = (
    "[" + re.escape(HORIZONTAL_WHITESPACE) + "]*+"
    "(?:(?P<verdict>verdict)|(?P<back_translation>back-translation)|(?P<issues>issues)):"
)
_FIRST_LINE_FIELD = re.compile(_FIELD_NAME, re.IGNORECASE | re.ASCII)
_LATER_LINE_FIELD = re.compile("\n" + _FIELD_NAME, re.IGNORECASE | re.ASCII)

_VERDICT_VALUES = frozenset(verdict.value for verdict in Verdict)

Field = tuple[str, str]
"""One field occurrence: its name and its raw text (after the colon, up to the next field)."""


def parse_reply(text: str) -> Reading:
    """Read one reply under the contract above. Never raises for any `str`."""
    fields = _find_fields(text)
    if _has_bare_cr(text):
        status, verdict = ParseStatus.BARE_CR, Verdict.UNCLEAR
    else:
        values = [_verdict_value(raw) for name, raw in fields if name == VERDICT_FIELD]
        status, verdict = _decide(values)
        if status is ParseStatus.OK and lenient_verdict_values(text) != values:
            status, verdict = ParseStatus.AMBIGUOUS, Verdict.UNCLEAR
    return Reading(
        verdict=verdict,
        parse_status=status,
        back_translation=_text_field(fields, BACK_TRANSLATION_FIELD),
        issues=_text_field(fields, ISSUES_FIELD),
        parser_version=PARSER_VERSION,
    )


def _has_bare_cr(text: str) -> bool:
    """True when some CR is not immediately followed by LF (two C-speed counts)."""
    return "\r" in text and text.count("\r") != text.count("\r\n")


def _find_fields(text: str) -> list[Field]:
    """Every field line in order, each with its text up to the line break before the next."""
    first = _FIRST_LINE_FIELD.match(text)
    matches = ([first] if first else []) + list(_LATER_LINE_FIELD.finditer(text))
    if not matches:
        return []
    ends = [match.start() for match in matches[1:]] + [len(text)]
    return [
        (str(match.lastgroup), text[match.end() : end])
        for match, end in zip(matches, ends, strict=True)
    ]


def _verdict_value(raw: str) -> str:
    # Only called without bare CRs, so the one CR a line can hold is its CRLF end,
    # which strip() removes along with the horizontal whitespace.
    return raw.partition("\n")[0].strip().lower()


def _decide(values: list[str]) -> tuple[ParseStatus, Verdict]:
    """Rule 3: the status and verdict given every verdict field's value, in order."""
    distinct = set(values)
    if not distinct:
        return ParseStatus.MISSING, Verdict.UNCLEAR
    if not distinct <= _VERDICT_VALUES:
        return ParseStatus.INVALID, Verdict.UNCLEAR
    if len(distinct) > 1:
        return ParseStatus.CONFLICTING, Verdict.UNCLEAR
    return ParseStatus.OK, Verdict(distinct.pop())


def _text_field(fields: Iterable[Field], name: str) -> str | None:
    """Rule 6: `None` when absent, else the non-empty blocks joined by a blank line."""
    blocks = [raw.replace("\r\n", "\n").strip() for found, raw in fields if found == name]
    if not blocks:
        return None
    return "\n\n".join(block for block in blocks if block)
