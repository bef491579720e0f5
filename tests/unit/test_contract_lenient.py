"""The lenient reading's character lists, and the facts its line-by-line NFKC relies on,
checked against all of Unicode (as Python's unicodedata has it), so that a Python upgrade
that changes any of them cannot go unnoticed."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import cache

from app.contract.lenient import (
    FORMAT_CHARACTERS,
    INLINE_WHITESPACE,
    LINE_BREAKS,
    UNICODE_VERSION,
    VERDICT_INITIALS,
    lenient_text,
    lenient_verdict_values,
)


@cache
def every_character() -> tuple[str, ...]:
    return tuple(chr(code) for code in range(sys.maxunicode + 1) if not 0xD800 <= code < 0xE000)


@cache
def every_seen() -> dict[str, str]:
    """Each character as the lenient reading sees it, worked out one step at a time."""
    return {char: seen(char) for char in every_character()}


def seen(char: str) -> str:
    normal = unicodedata.normalize("NFKC", char)
    if normal == char:
        return "" if unicodedata.category(char) == "Cf" else char
    return "".join(c for c in normal if unicodedata.category(c) != "Cf")


def test_the_unicode_data_is_the_one_the_lists_were_made_from() -> None:
    assert unicodedata.unidata_version == UNICODE_VERSION, (
        "Python's Unicode data changed: check every list in app/contract/lenient.py (the "
        "tests below say which), and bump PARSER_VERSION if any reply reads differently"
    )


def test_line_breaks_are_where_splitlines_breaks() -> None:
    breaking = {c for c in every_character() if len(f"a{c}b".splitlines()) == 2}
    assert set(LINE_BREAKS) == breaking


def test_inline_whitespace_is_every_other_space() -> None:
    spaces = {c for c in every_character() if c.isspace()}
    assert set(INLINE_WHITESPACE) == spaces - set(LINE_BREAKS)


def test_format_characters_are_category_cf() -> None:
    found = set(re.findall("[" + FORMAT_CHARACTERS + "]", "".join(every_character())))
    assert found == {c for c in every_character() if unicodedata.category(c) == "Cf"}


def test_verdict_initials_are_every_character_seen_as_a_leading_v() -> None:
    found = set(re.findall("[" + VERDICT_INITIALS + "]", "".join(every_character())))
    assert found == {c for c, s in every_seen().items() if s.lstrip()[:1] in ("v", "V")}


def test_what_may_stand_before_the_v_is_whitespace_and_format_characters_only() -> None:
    # A line is only normalised when its first character after these is a verdict initial:
    # no other character is seen as whitespace, or as nothing at all.
    vanishing = {c for c, s in every_seen().items() if s.isspace() or not s}
    assert vanishing == set(INLINE_WHITESPACE + LINE_BREAKS) | {
        c for c in every_character() if unicodedata.category(c) == "Cf"
    }


def test_nfkc_neither_makes_nor_removes_a_line_break() -> None:
    for char in every_character():
        normal = unicodedata.normalize("NFKC", char)
        if char in LINE_BREAKS:
            assert normal == char
        else:
            assert not set(normal) & set(LINE_BREAKS), hex(ord(char))


def test_a_line_break_never_composes_or_reorders_with_its_neighbours() -> None:
    # Canonical composition joins only pairs some character decomposes into, and reordering
    # stops at a starter (combining class 0): so NFKC works within a line.
    for char in LINE_BREAKS:
        assert unicodedata.combining(char) == 0
    for char in every_character():
        parts = unicodedata.decomposition(char).split()
        codes = {chr(int(part, 16)) for part in parts if not part.startswith("<")}
        assert not codes & set(LINE_BREAKS), hex(ord(char))


def test_lenient_text_normalises_and_drops_invisible_characters() -> None:
    assert lenient_text("VER\u200bDICT\uff1a \uff26AITHFUL\u2028") == "VERDICT: FAITHFUL\u2028"
    assert lenient_text("plain ASCII\x0b") == "plain ASCII\x0b"


def test_values_are_read_per_line_in_order() -> None:
    text = "\u200bVERDICT : Faithful \u2028x\x85 verdict\uff1aMISMATCH\nVERDICT:"
    assert lenient_verdict_values(text) == ["faithful", "mismatch", ""]


def test_a_long_run_before_the_name_and_many_candidate_lines_are_read() -> None:
    text = "\u200b \u2060" * 200_000 + "VERDICT: MISMATCH" + "\u2028V" * 100_000
    assert lenient_verdict_values(text) == ["mismatch"]
