"""Check `contract_text_in_input`: a statement line that looks like a reply contract field.

A reply field is a line beginning with `VERDICT:`, `BACK-TRANSLATION:` or `ISSUES:`
(app.contract.parser). A statement holding such a line could make a reply that quotes
it read as a verdict, so the pair can never pass. This check fails closed: it sees
*more* lines than either of the parser's readings does, never fewer:
- lines break wherever `str.splitlines()` breaks: LF, CR (bare or in CRLF), and also VT,
  FF, FS/GS/RS, NEL, U+2028 and U+2029, which the strict reading keeps inside a line but
  the lenient one, and a model copying the text, may turn into line ends;
- each line is read as it stands and as the lenient reading sees it (NFKC, format
  characters such as U+200B, U+FEFF, U+2060 or U+00AD removed), so a field behind a
  zero-width character or with a fullwidth colon is found;
- leading whitespace is any run of `str.isspace()` characters, and so is the space
  between the name and its colon (`VERDICT : x`);
- names match in any letter case, Unicode folding included (`verdıct:` counts here,
  although the parser, matching ASCII case only, would not read it as a field).
A name that does not start its line (`the VERDICT: is`) is no field for the parser, so
it is harmless and not reported.
"""

from __future__ import annotations

import re
from itertools import zip_longest

from app.contract.lenient import lenient_text
from app.vocabulary import Pair

# Possessive runs: a long line of spaces costs one pass.
_FIELD_START = re.compile(r"\s*+(verdict|back-translation|issues)\s*+:", re.IGNORECASE)
MAX_FINDINGS = 5


def find_contract_text(pair: Pair) -> list[str]:
    found: list[str] = []
    for part, text in (("informal", pair.informal), ("formal", pair.formal)):
        found.extend(_field_lines(part, text))
    found.extend(_field_lines("header", pair.header))
    return found[:MAX_FINDINGS]


def _field_lines(part: str, text: str) -> list[str]:
    found: list[str] = []
    for number, name in enumerate(_line_fields(text), start=1):
        if name is not None:
            found.append(_message(part, number, name))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _line_fields(text: str) -> list[str | None]:
    """Per line, the field name it begins with in either reading (None: no field).

    NFKC keeps the lines where they are, so both readings have the same lines; should a
    Unicode version ever change that, the extra lines are still read (fail closed)."""
    lenient = lenient_text(text)
    lines = text.splitlines()
    if lenient == text:
        return [_field_name(line) for line in lines]
    pairs = zip_longest(lines, lenient.splitlines(), fillvalue="")
    return [_field_name(line) or _field_name(seen) for line, seen in pairs]


def _field_name(line: str) -> str | None:
    match = _FIELD_START.match(line)
    return match.group(1).upper() if match else None


def _message(part: str, number: int, name: str) -> str:
    return (
        f"line {number} of the {part} statement begins with `{name}:`, the reply "
        "contract's field syntax; a reply quoting it could be read as that field"
    )
