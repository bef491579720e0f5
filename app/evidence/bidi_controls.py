"""Check `bidi_control`: a bidirectional control character anywhere in the pair.

Unicode's bidirectional algorithm (UAX #9) lets a few invisible characters change the
order in which text is *shown* without changing the text: an embedding, override or
isolate (U+202A-U+202E, U+2066-U+2069) turns a run around, so a page can show `a < b`
where `b < a` is stored ("Trojan Source", CVE-2021-42574). A person reviewing the pair
would then read another statement than the one Lean and the models read, so a pair
holding one can never pass: a person must look, and every page shows each such character
as a visible marker instead (app/page_text.py).

The three marks (LRM U+200E, RLM U+200F, ALM U+061C) count too. They embed nothing, but
each is an invisible strong right-to-left or left-to-right character, and one is enough
to reorder the digits and operators after it: `x = <RLM>12 - 34` is shown as
`x = 34 - 12` in a left-to-right page. Hebrew or Arabic text may hold a mark honestly;
such a pair then costs a person's look, never a wrong pass (fail closed).

One finding per field and character, at its first place, with how often it occurs: at
most 36, however many the text holds; the scan is one regular-expression pass.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

from app.evidence.finding import Detected, Span
from app.vocabulary import Pair

# Each control and its usual abbreviation (UAX #9, table 4), in code point order.
BIDI_CONTROLS: Mapping[str, str] = {
    "\u061c": "ALM",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u202a": "LRE",
    "\u202b": "RLE",
    "\u202c": "PDF",
    "\u202d": "LRO",
    "\u202e": "RLO",
    "\u2066": "LRI",
    "\u2067": "RLI",
    "\u2068": "FSI",
    "\u2069": "PDI",
}
BIDI_CONTROL = re.compile("[" + "".join(BIDI_CONTROLS) + "]")


def code_point_name(control: str) -> str:
    """`U+202E RIGHT-TO-LEFT OVERRIDE`: how a finding and a page's marker title name it."""
    return f"U+{ord(control):04X} {unicodedata.name(control)}"


def find_bidi_controls(pair: Pair) -> list[Detected]:
    found: list[Detected] = []
    for part, text in (("informal", pair.informal), ("formal", pair.formal)):
        found.extend(_controls(part, text))
    found.extend(_controls("header", pair.header))
    return found


def _controls(part: str, text: str) -> list[Detected]:
    """One finding per distinct control in `text`, in the order they first occur."""
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for match in BIDI_CONTROL.finditer(text):
        first.setdefault(match[0], match.start())
        count[match[0]] = count.get(match[0], 0) + 1
    return [_detected(part, text, control, at, count[control]) for control, at in first.items()]


def _detected(part: str, text: str, control: str, at: int, times: int) -> Detected:
    line_start = text.rfind("\n", 0, at) + 1
    span = Span(part, text.count("\n", 0, at) + 1, at - line_start, at - line_start + 1)
    return Detected(_message(part, control, span, times), span)


def _message(part: str, control: str, span: Span, times: int) -> str:
    occurs = "once" if times == 1 else f"{times} times"
    return (
        f"the {part} text holds {code_point_name(control)} ({BIDI_CONTROLS[control]}) "
        f"{occurs}, first at line {span.line}, column {span.column + 1}: an invisible "
        "bidirectional control changes the order in which text is shown, so a person may "
        "read another statement than the one stored"
    )
