"""Check `contract_text_in_input`: a statement line that looks like a reply contract field.

A reply field is a line beginning with `VERDICT:`, `BACK-TRANSLATION:` or `ISSUES:`
(app.contract.parser). A statement holding such a line could make a reply that quotes
it read as a verdict, so the pair can never pass. This check fails closed: it sees
*more* lines than the parser does, never fewer:
- lines break wherever `str.splitlines()` breaks: LF, CR (bare or in CRLF), and also VT,
  FF, FS/GS/RS, NEL, U+2028 and U+2029, which the parser keeps inside a line but a model
  copying the text might turn into line ends;
- leading whitespace is any run of `str.isspace()` characters;
- names match in any letter case, Unicode folding included (`verdıct:` counts here,
  although the parser, matching ASCII case only, would not read it as a field).
A name that does not start its line (`the VERDICT: is`) is no field for the parser, so
it is harmless and not reported.
"""

from __future__ import annotations

import re

from app.vocabulary import Pair

_FIELD_START = re.compile(r"(verdict|back-translation|issues):", re.IGNORECASE)
MAX_FINDINGS = 5


def find_contract_text(pair: Pair) -> list[str]:
    found: list[str] = []
    for part, text in (("informal", pair.informal), ("formal", pair.formal)):
        found.extend(_field_lines(part, text))
    found.extend(_field_lines("header", pair.header))
    return found[:MAX_FINDINGS]


def _field_lines(part: str, text: str) -> list[str]:
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FIELD_START.match(line.lstrip())
        if match:
            found.append(_message(part, number, match.group(1).upper()))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _message(part: str, number: int, name: str) -> str:
    return (
        f"line {number} of the {part} statement begins with `{name}:`, the reply "
        "contract's field syntax; a reply quoting it could be read as that field"
    )
