"""Property tests: the parser against an independent, plain line-by-line oracle.

The oracle is written from the contract's words (split on LF, drop one CR per line, walk
the lines), sharing no code with the parser, which uses a regular expression. Its lenient
reading (rule 7) normalises the whole text with NFKC, drops every character of category
Cf one by one and splits with `str.splitlines()`; the parser normalises only the lines
that can hold a verdict.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.contract import PARSER_VERSION, parse_reply
from app.contract.lenient import lenient_verdict_values
from app.vocabulary import ParseStatus, Verdict

NAMES = ("verdict", "back-translation", "issues")
VALID = {"faithful", "mismatch", "unclear"}


@dataclass
class OracleReply:
    bare_cr: bool
    verdict_values: list[str] = field(default_factory=list)
    blocks: dict[str, list[list[str]]] = field(default_factory=dict)


def field_of_line(line: str) -> tuple[str, str] | None:
    """(name, rest of line) when the line starts a field, else None."""
    i = 0
    while i < len(line) and line[i].isspace() and line[i] not in "\r\n":
        i += 1
    for name in NAMES:
        head = line[i : i + len(name) + 1]
        if head.isascii() and head.lower() == name + ":":
            return name, line[i + len(name) + 1 :]
    return None


def oracle_lines(text: str) -> list[str]:
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def oracle_read(text: str) -> OracleReply:
    bare = any(c == "\r" and text[i + 1 : i + 2] != "\n" for i, c in enumerate(text))
    reply = OracleReply(bare, blocks={"back-translation": [], "issues": []})
    current: list[str] | None = None
    for line in oracle_lines(text):
        found = field_of_line(line)
        if found is None:
            if current is not None:
                current.append(line)
        elif found[0] == "verdict":
            reply.verdict_values.append(found[1].strip().lower())
            current = None
        else:
            current = [found[1]]
            reply.blocks[found[0]].append(current)
    return reply


def oracle_lenient_values(text: str) -> list[str]:
    """Rule 7's reading: NFKC, no Cf, every Unicode line break, `VERDICT` <space> `:`."""
    normal = unicodedata.normalize("NFKC", text)
    seen = "".join(c for c in normal if unicodedata.category(c) != "Cf")
    values = []
    for line in seen.splitlines():
        rest = line.lstrip()
        if rest[:7].isascii() and rest[:7].lower() == "verdict":
            rest = rest[7:].lstrip()
            if rest.startswith(":"):
                values.append(rest[1:].strip().lower())
    return values


def oracle_status(reply: OracleReply, text: str) -> tuple[str, str]:
    values = reply.verdict_values
    if reply.bare_cr:
        return "bare_cr", "unclear"
    if not values:
        return "missing", "unclear"
    if any(value not in VALID for value in values):
        return "invalid", "unclear"
    if len(set(values)) > 1:
        return "conflicting", "unclear"
    if oracle_lenient_values(text) != values:
        return "ambiguous", "unclear"
    return "ok", values[0]


def oracle_text(blocks: list[list[str]]) -> str | None:
    if not blocks:
        return None
    texts = ["\n".join(lines).strip() for lines in blocks]
    return "\n\n".join(text for text in texts if text)


FRAGMENTS = [
    "VERDICT:", "verdict:", "Verdict: ", "VERDICT", "BACK-TRANSLATION:", "back-translation:",
    "ISSUES:", "issues:", "FAITHFUL", "faithful", "MISMATCH", "unclear", "UNCLEAR", "maybe",
    "**", '"', "`", "```", " ", "\t", "\x0b", "\x0c", "\x1c", "\u3000", "\xa0", "\x85",
    "\u2028", "\u2029", "\r", "\n", "\n", "\r\n", "\r\n", "VERD\u0131CT:", "BAC\u212a-TRANSLATION:",
    "Therefore ", "x", "\x1d", "\u200b", "\ufeff", "\u2060", "\xad", "\u202e", "VERDICT :",
    "VERDICT\uff1a", "\uff36ERDICT:", "\u0412ERDICT:", "\uff2d\uff29SMATCH", "\u0301", "\u2165",
    "\U0001d415", "\uff1a", ":",
]  # fmt: skip
replies = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=4)), max_size=40).map(
    "".join
)
# Whole lines, mostly agreeing verdicts: replies the strict reading finds `ok` often, with
# what only the lenient reading sees (hidden line breaks, invisible and fullwidth forms).
LINE_LEADS = ["", "", " ", "\u200b", "\ufeff", "\xad", "\u3000", "x "]
LINE_NAMES = [
    "VERDICT:", "VERDICT:", "verdict:", "VERDICT :", "VERDICT\uff1a", "\uff36ERDICT:",
    "VERD\u0131CT:", "V\u2060ERDICT:", "ISSUES:", "BACK-TRANSLATION:", "",
]  # fmt: skip
LINE_VALUES = [" FAITHFUL", " FAITHFUL", " faithful ", " MISMATCH", " UNCLEAR", " none", ""]
LINE_ENDS = ["\n", "\n", "\n", "\r\n", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1e"]
field_line = st.tuples(
    *(st.sampled_from(part) for part in (LINE_LEADS, LINE_NAMES, LINE_VALUES, LINE_ENDS))
)
line_replies = st.lists(field_line.map("".join), min_size=1, max_size=8).map("".join)
any_text = st.one_of(st.text(), replies, line_replies)


@settings(max_examples=600)
@given(any_text)
@example("VERDICT: FAITHFUL\r")
@example("BACK-TRANSLATION: a\r\r\nb\r")
@example("ISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL")
@example("VERDICT: FAITHFUL\n\u200bVERDICT : MISMATCH")
def test_parser_agrees_with_the_oracle(text: str) -> None:
    reply = oracle_read(text)
    reading = parse_reply(text)
    assert (reading.parse_status.value, reading.verdict.value) == oracle_status(reply, text)
    assert reading.back_translation == oracle_text(reply.blocks["back-translation"])
    assert reading.issues == oracle_text(reply.blocks["issues"])


@given(any_text)
def test_never_raises_and_always_carries_version_and_unclear_unless_ok(text: str) -> None:
    reading = parse_reply(text)
    assert reading.parser_version == PARSER_VERSION != ""
    if reading.parse_status is not ParseStatus.OK:
        assert reading.verdict is Verdict.UNCLEAR


@settings(max_examples=400)
@given(any_text)
def test_faithful_implies_an_agreeing_line_anchored_field(text: str) -> None:
    if parse_reply(text).verdict is not Verdict.FAITHFUL:
        return
    assert parse_reply(text).parse_status is ParseStatus.OK
    assert "\r" not in text.replace("\r\n", "")
    found = [field_of_line(line) for line in oracle_lines(text)]
    values = [rest.strip().lower() for name, rest in filter(None, found) if name == "verdict"]
    assert values and all(value == "faithful" for value in values)


@settings(max_examples=600)
@given(any_text)
@example("\u2028V\u0301ERDICT: x")
@example("\u2165ERDICT: x")  # ROMAN NUMERAL SIX: NFKC "VI", so no field
def test_lenient_values_match_normalising_the_whole_text(text: str) -> None:
    assert lenient_verdict_values(text) == oracle_lenient_values(text)


@settings(max_examples=600)
@given(any_text)
def test_whenever_the_result_is_ok_the_lenient_reading_finds_the_same_verdicts(text: str) -> None:
    if parse_reply(text).parse_status is not ParseStatus.OK:
        return
    strict = oracle_read(text).verdict_values
    assert oracle_lenient_values(text) == strict
    assert strict and len(set(strict)) == 1


non_field_line = st.text().filter(lambda line: "\n" not in line and field_of_line(line) is None)


@settings(max_examples=400)
@given(any_text.filter(lambda text: not text.endswith("\r")), non_field_line)
def test_appending_a_non_field_line_never_makes_faithful(text: str, line: str) -> None:
    # A reply ending in CR is excluded: "\n" would complete its CRLF, curing the bare CR.
    # That reply was `bare_cr` before and is read afresh, not changed; see the rules tests.
    if parse_reply(text).verdict is Verdict.FAITHFUL:
        return
    assert parse_reply(text + "\n" + line).verdict is not Verdict.FAITHFUL


@given(any_text.filter(lambda text: "\r" not in text))
def test_crlf_line_ends_read_like_lf(text: str) -> None:
    assert parse_reply(text.replace("\n", "\r\n")) == parse_reply(text)


def test_a_trailing_cr_is_bare_until_a_line_feed_follows() -> None:
    # The one way appending a line can turn a reply faithful: it completes a CRLF.
    assert parse_reply("VERDICT: FAITHFUL\r").parse_status is ParseStatus.BARE_CR
    assert parse_reply("VERDICT: FAITHFUL\r\nmore").is_faithful
