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
from itertools import accumulate, zip_longest

from app.contract.lenient import lenient_text
from app.evidence.finding import Detected, Span
from app.vocabulary import Pair

# Possessive runs: a long line of spaces costs one pass.
_FIELD_START = re.compile(r"\s*+(verdict|back-translation|issues)\s*+:", re.IGNORECASE)
MAX_FINDINGS = 5


def find_contract_text(pair: Pair) -> list[Detected]:
    found: list[Detected] = []
    for part, text in (("informal", pair.informal), ("formal", pair.formal)):
        found.extend(_field_lines(part, text))
    found.extend(_field_lines("header", pair.header))
    return found[:MAX_FINDINGS]


def _field_lines(part: str, text: str) -> list[Detected]:
    found: list[Detected] = []
    for number, name in enumerate(_line_fields(text), start=1):
        if name is not None:
            found.append(Detected(_message(part, number, name), _span(part, text, number)))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _span(part: str, text: str, number: int) -> Span:
    """Where the field is: its name and colon on line `number` (as `str.splitlines()`
    counts), or the whole line when only the lenient reading sees a field there; given in
    LF lines, the way every span is."""
    rows = text.splitlines(keepends=True)
    start = list(accumulate(map(len, rows[: number - 1]), initial=0))[-1]
    row = rows[number - 1].splitlines()[0] if rows[number - 1].splitlines() else ""
    match = _FIELD_START.match(row)
    begin, end = (match.start(1), match.end()) if match else (0, len(row))
    line_start = text.rfind("\n", 0, start + begin) + 1
    line_end = text.find("\n", line_start)
    line_end = len(text) if line_end < 0 else line_end
    line = text.count("\n", 0, line_start) + 1
    column = start + begin - line_start
    return Span(part, line, column, min(start + end, line_end) - line_start)


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
