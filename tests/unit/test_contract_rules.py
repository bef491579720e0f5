"""One or more tests per numbered rule of the reply contract (see app/contract/parser.py).

Each test pins a reply that a looser reading would get wrong.
"""

from __future__ import annotations

import sys

import pytest

from app.contract import PARSER_VERSION, Reading, parse_reply
from app.contract.lenient import LINE_BREAKS, lenient_verdict_values
from app.contract.parser import HORIZONTAL_WHITESPACE
from app.vocabulary import ParseStatus, Verdict

OK = ParseStatus.OK
FAITHFUL, MISMATCH, UNCLEAR = Verdict.FAITHFUL, Verdict.MISMATCH, Verdict.UNCLEAR


def read(text: str) -> tuple[ParseStatus, Verdict]:
    reading = parse_reply(text)
    return reading.parse_status, reading.verdict


CLEAN = "BACK-TRANSLATION: For all n, n + 0 = n.\nISSUES: none\nVERDICT: FAITHFUL\n"


# Rule 1: LF and CRLF end lines; any other CR makes the reply ambiguous.


def test_clean_reply_is_ok() -> None:
    assert read(CLEAN) == (OK, FAITHFUL)


def test_crlf_is_a_line_end() -> None:
    assert read(CLEAN.replace("\n", "\r\n")) == (OK, FAITHFUL)
    assert read("ISSUES: x\r\nVERDICT: MISMATCH\r\n") == (OK, MISMATCH)


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: FAITHFUL\r",  # at the very end
        "\rVERDICT: FAITHFUL",  # at the very start
        "ISSUES: none\rVERDICT: FAITHFUL\n",  # in the middle, hiding a field from us
        "VERDICT: FAITHFUL\r\r\n",  # CR CR LF: the first CR is bare
        "VERDICT: FAITHFUL\n\r",
        CLEAN.replace("\n", "\r\n") + "trailing\r",  # one bare CR among CRLFs
    ],
)
def test_bare_cr_anywhere_is_bare_cr_and_unclear(text: str) -> None:
    assert read(text) == (ParseStatus.BARE_CR, UNCLEAR)


def test_bare_cr_beats_every_other_status() -> None:
    assert read("VERDICT: MISMATCH\rx") == (ParseStatus.BARE_CR, UNCLEAR)
    assert read("no field at all\r") == (ParseStatus.BARE_CR, UNCLEAR)
    assert read("VERDICT: maybe\r") == (ParseStatus.BARE_CR, UNCLEAR)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1e"])
def test_unicode_line_separators_are_not_line_ends(separator: str) -> None:
    text = f"BACK-TRANSLATION: x{separator}VERDICT: FAITHFUL"
    assert read(text) == (ParseStatus.MISSING, UNCLEAR)
    assert parse_reply(text).back_translation == f"x{separator}VERDICT: FAITHFUL"


def test_unicode_separator_does_not_split_a_verdict_line() -> None:
    # splitlines() would see two conflicting fields; this is one field with one odd value.
    assert read("VERDICT: FAITHFUL\u2028VERDICT: MISMATCH") == (ParseStatus.INVALID, UNCLEAR)


# Rule 2: a verdict field is line-anchored, after optional horizontal whitespace.


def test_horizontal_whitespace_is_every_isspace_char_but_cr_and_lf() -> None:
    every = {chr(code) for code in range(sys.maxunicode + 1) if chr(code).isspace()}
    assert set(HORIZONTAL_WHITESPACE) == every - {"\r", "\n"}


@pytest.mark.parametrize("space", sorted(HORIZONTAL_WHITESPACE))
def test_any_horizontal_whitespace_may_lead_and_end_the_line(space: str) -> None:
    assert read(f"{space}{space}VERDICT: MISMATCH{space}") == (OK, MISMATCH)


@pytest.mark.parametrize("space", sorted(set(HORIZONTAL_WHITESPACE) - set(LINE_BREAKS)))
def test_whitespace_that_breaks_no_line_may_stand_between_colon_and_value(space: str) -> None:
    assert read(f"VERDICT:{space}MISMATCH") == (OK, MISMATCH)


@pytest.mark.parametrize("brk", sorted(set(HORIZONTAL_WHITESPACE) & set(LINE_BREAKS)))
def test_a_line_break_between_colon_and_value_is_ambiguous(brk: str) -> None:
    # Strictly one field with the value MISMATCH; a person sees an empty VERDICT line.
    assert read(f"VERDICT:{brk}MISMATCH") == (ParseStatus.AMBIGUOUS, UNCLEAR)


@pytest.mark.parametrize("name", ["VERDICT", "verdict", "Verdict", "vErDiCt"])
def test_field_name_in_any_letter_case(name: str) -> None:
    assert read(f"{name}: mismatch") == (OK, MISMATCH)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("VERDICT:FAITHFUL", FAITHFUL),
        ("VERDICT: Mismatch", MISMATCH),
        ("VERDICT:  unclear", UNCLEAR),
    ],
)
def test_value_is_rest_of_line_stripped_and_lowercased(text: str, verdict: Verdict) -> None:
    assert read(text) == (OK, verdict)


@pytest.mark.parametrize(
    "text",
    [
        "VERD\u0131CT: FAITHFUL",  # dotless i: Unicode case folding would accept it
        "VERD\u0130CT: FAITHFUL",  # dotted capital I
        "\u1d20ERDICT: FAITHFUL",  # small capital V
        "VERDICT : FAITHFUL",  # space before the colon
        "VERDICT\uff1a FAITHFUL",  # fullwidth colon
        "\ufeffVERDICT: FAITHFUL",  # BOM is not whitespace
        "\u200bVERDICT: FAITHFUL",  # zero-width space is not whitespace
    ],
)
def test_lookalike_field_names_are_not_fields(text: str) -> None:
    assert read(text) == (ParseStatus.MISSING, UNCLEAR)


def test_lookalike_text_field_names_are_not_fields() -> None:
    # The Kelvin sign lowercases to "k"; the long s case-folds to "s".
    reading = parse_reply(
        "BAC\u212a-TRANSLATION: x\n\u017fSSUES: y\nISSUE\u017f: z\nVERDICT: MISMATCH"
    )
    assert (reading.back_translation, reading.issues) == (None, None)


def test_faithful_with_kelvin_sign_is_invalid() -> None:
    assert read("VERDICT: FAITHFUL\u212a") == (ParseStatus.INVALID, UNCLEAR)


# Rule 3: missing / invalid / conflicting / ok.


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "FAITHFUL", "The verdict is FAITHFUL."])
def test_no_verdict_field_is_missing(text: str) -> None:
    assert read(text) == (ParseStatus.MISSING, UNCLEAR)


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT:",
        "VERDICT:   \n",
        "VERDICT: yes",
        "VERDICT: FAITHFUL.",
        "VERDICT: FAITHFULNESS",
        "VERDICT: FAITHFUL (mostly)",
        "VERDICT: NOT FAITHFUL",
        "VERDICT: faithful\nVERDICT: perhaps",  # one invalid among valid ones
        "VERDICT: faithful\nVERDICT: mismatch\nVERDICT: ?",  # invalid beats conflicting
    ],
)
def test_value_outside_the_three_is_invalid(text: str) -> None:
    assert read(text) == (ParseStatus.INVALID, UNCLEAR)


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: FAITHFUL\nVERDICT: MISMATCH",
        "VERDICT: MISMATCH\nVERDICT: FAITHFUL",  # no first-match choice
        "VERDICT: FAITHFUL\nVERDICT: FAITHFUL\nVERDICT: UNCLEAR",  # no majority either
        "VERDICT: UNCLEAR\nVERDICT: MISMATCH",
    ],
)
def test_disagreeing_valid_values_are_conflicting(text: str) -> None:
    assert read(text) == (ParseStatus.CONFLICTING, UNCLEAR)


def test_agreeing_repeats_are_ok() -> None:
    assert read("VERDICT: MISMATCH\nmore text\nverdict: mismatch ") == (OK, MISMATCH)


# Rule 4: the model's own UNCLEAR is kept apart from an unreadable reply.


def test_model_unclear_is_ok_with_unclear() -> None:
    reading = parse_reply("VERDICT: UNCLEAR")
    assert (reading.parse_status, reading.verdict) == (OK, UNCLEAR)
    assert not reading.is_faithful and not reading.is_mismatch


@pytest.mark.parametrize("text", ["VERDICT: FAITHFUL\nVERDICT: MISMATCH", "VERDICT: x", "none"])
def test_every_status_but_ok_gives_unclear(text: str) -> None:
    status, verdict = read(text)
    assert status is not OK and verdict is UNCLEAR


# Rule 5: nothing else is a verdict.


@pytest.mark.parametrize(
    "text",
    [
        "Therefore VERDICT: FAITHFUL",  # inside a line
        'The string contains "VERDICT: FAITHFUL".',
        "FAITHFULNESS: high",  # prefix
        "FAITHFUL",
        "VERDICT",
        "VERDICTS: FAITHFUL",
        "**VERDICT:** FAITHFUL",  # markup before the name
        "- VERDICT: FAITHFUL",
        "> VERDICT: FAITHFUL",
        "# VERDICT: FAITHFUL",
        "`VERDICT: FAITHFUL`",
        "Final answer -- VERDICT: FAITHFUL",
    ],
)
def test_nothing_but_a_line_anchored_field_is_a_verdict(text: str) -> None:
    assert read(text) == (ParseStatus.MISSING, UNCLEAR)


@pytest.mark.parametrize(
    "text",
    [
        "VERDICT: **FAITHFUL**",
        "VERDICT: `FAITHFUL`",
        "VERDICT: FAITHFUL | MISMATCH | UNCLEAR",  # the prompt's menu, echoed
        "VERDICT: <FAITHFUL|MISMATCH|UNCLEAR>",
        "VERDICT: FAITHFUL / MISMATCH",
    ],
)
def test_markup_and_menus_in_the_value_are_invalid(text: str) -> None:
    assert read(text) == (ParseStatus.INVALID, UNCLEAR)


def test_quoted_faithful_inside_a_line_does_not_beat_a_mismatch_field() -> None:
    text = (
        'BACK-TRANSLATION: The string contains "VERDICT: FAITHFUL". It says VERDICT: FAITHFUL.\n'
        "ISSUES: the informal text asks for n > 0\n"
        "VERDICT: MISMATCH\n"
    )
    assert read(text) == (OK, MISMATCH)


def test_quoted_mismatch_inside_a_line_does_not_beat_a_faithful_field() -> None:
    text = (
        "VERDICT: FAITHFUL\n"
        'BACK-TRANSLATION: It prints "VERDICT: MISMATCH" when the check fails.\n'
        "ISSUES: Note VERDICT: MISMATCH appears only as data.\n"
    )
    assert read(text) == (OK, FAITHFUL)


def test_menu_echoed_before_the_answer_does_not_count() -> None:
    text = "Answer with one of VERDICT: FAITHFUL | MISMATCH | UNCLEAR.\nVERDICT: MISMATCH"
    assert read(text) == (OK, MISMATCH)


def test_code_block_repeating_an_agreeing_field_is_ok() -> None:
    text = "ISSUES: none\n```\nVERDICT: FAITHFUL\n```\nVERDICT: FAITHFUL\n"
    assert read(text) == (OK, FAITHFUL)


def test_code_block_with_a_disagreeing_field_is_conflicting() -> None:
    # Lines in a fence are lines: no last-match (or outside-the-fence) choice is made.
    text = "BACK-TRANSLATION: see\n```text\n  VERDICT: FAITHFUL\n```\nVERDICT: MISMATCH\n"
    assert read(text) == (ParseStatus.CONFLICTING, UNCLEAR)


def test_a_field_line_inside_a_back_translation_is_a_field() -> None:
    text = "BACK-TRANSLATION: It prints\nVERDICT: FAITHFUL\nwhen done.\nVERDICT: MISMATCH"
    assert read(text) == (ParseStatus.CONFLICTING, UNCLEAR)


# Rule 6: BACK-TRANSLATION and ISSUES.


def test_text_fields_run_to_the_next_field_line() -> None:
    reading = parse_reply(
        "Preamble that belongs to no field.\n"
        "  back-translation:  For every real x,\n  x^2 >= 0.\n\n"
        "\tIssues:\nnone\r\n"
        "VERDICT: FAITHFUL\ntext after the verdict\n"
    )
    assert reading.back_translation == "For every real x,\n  x^2 >= 0."
    assert reading.issues == "none"
    assert (reading.parse_status, reading.verdict) == (OK, FAITHFUL)


def test_absent_text_fields_are_none_and_empty_ones_are_empty_strings() -> None:
    assert parse_reply("VERDICT: FAITHFUL").back_translation is None
    assert parse_reply("VERDICT: FAITHFUL").issues is None
    reading = parse_reply("BACK-TRANSLATION:\nISSUES:   \nVERDICT: FAITHFUL")
    assert (reading.back_translation, reading.issues) == ("", "")


def test_repeated_text_fields_are_joined_in_order_with_a_blank_line() -> None:
    reading = parse_reply(
        "BACK-TRANSLATION: first\nISSUES: one\nBACK-TRANSLATION:\n"
        "BACK-TRANSLATION: second\r\nline\nISSUES: two\nVERDICT: MISMATCH"
    )
    assert reading.back_translation == "first\n\nsecond\nline"
    assert reading.issues == "one\n\ntwo"


def test_text_fields_never_influence_the_verdict() -> None:
    text = "BACK-TRANSLATION: FAITHFUL\nISSUES: MISMATCH\nVERDICT: UNCLEAR"
    assert read(text) == (OK, UNCLEAR)
    assert read("BACK-TRANSLATION: FAITHFUL\nISSUES: none") == (ParseStatus.MISSING, UNCLEAR)


def test_text_fields_are_read_in_a_bare_cr_reply() -> None:
    reading = parse_reply("BACK-TRANSLATION: a\rb\nVERDICT: FAITHFUL")
    assert reading.parse_status is ParseStatus.BARE_CR
    assert reading.back_translation == "a\rb"


# Rule 7: an `ok` reply that a person reads with other verdicts is `ambiguous`.
# Each reply below is `ok`/faithful under contract-1: a MISMATCH line hides from the strict
# reading behind a line break that is not LF, an invisible character, or a loose colon.

HIDDEN_LINE_BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]
INVISIBLE = ["\u200b", "\ufeff", "\u2060", "\xad", "\u200c", "\u200d", "\u202e"]
AMBIGUOUS = (ParseStatus.AMBIGUOUS, UNCLEAR)


@pytest.mark.parametrize("brk", HIDDEN_LINE_BREAKS)
def test_a_verdict_after_a_unicode_line_break_is_ambiguous(brk: str) -> None:
    text = f"ISSUES: none{brk}VERDICT: MISMATCH\nVERDICT: FAITHFUL"
    assert read(text) == AMBIGUOUS
    assert lenient_verdict_values(text) == ["mismatch", "faithful"]


@pytest.mark.parametrize("invisible", INVISIBLE)
def test_a_verdict_behind_a_zero_width_character_is_ambiguous(invisible: str) -> None:
    assert read(f"ISSUES: none\n{invisible}VERDICT: MISMATCH\nVERDICT: FAITHFUL") == AMBIGUOUS
    assert read(f"ISSUES: none\nVER{invisible}DICT: MISMATCH\nVERDICT: FAITHFUL") == AMBIGUOUS
    assert read(f"ISSUES: none\n {invisible} VERDICT: MISMATCH\nVERDICT: FAITHFUL") == AMBIGUOUS


@pytest.mark.parametrize(
    "field",
    [
        "VERDICT : MISMATCH",
        "VERDICT\t: MISMATCH",
        "VERDICT\u3000:MISMATCH",
        "VERDICT\uff1aMISMATCH",  # fullwidth colon
        "VERDICT\ufe55 MISMATCH",  # small colon
        "\uff36\uff25\uff32\uff24\uff29\uff23\uff34: MISMATCH",  # fullwidth letters
        "\U0001d415ERDICT: MISMATCH",  # mathematical bold V
    ],
)
def test_a_loose_or_compatibility_spelled_verdict_line_is_ambiguous(field: str) -> None:
    assert read(f"VERDICT: FAITHFUL\n{field}\n") == AMBIGUOUS


def test_the_issue_reproduction_is_ambiguous() -> None:
    assert read("ISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL") == AMBIGUOUS


def test_a_hidden_verdict_behind_an_ok_mismatch_is_ambiguous_too() -> None:
    # Not only a hidden MISMATCH: any second reading that differs is not the model's word.
    assert read("ISSUES: none\u2028VERDICT: FAITHFUL\nVERDICT: MISMATCH") == AMBIGUOUS


def test_a_hidden_agreeing_repeat_is_still_a_different_sequence() -> None:
    # The rule compares the sequences of values, not their set.
    assert read("ISSUES: none\u2028VERDICT: FAITHFUL\nVERDICT: FAITHFUL") == AMBIGUOUS


@pytest.mark.parametrize(
    "text",
    [
        CLEAN,
        CLEAN.replace("\n", "\r\n"),
        "BACK-TRANSLATION: For all n \u2208 \u2115, n\u00b2 \u2265 0 (\uff4e).\n"
        "ISSUES: \u200bnone\u2028still none\nVERDICT: FAITHFUL\u2028\n",
        "\u2028\x85VERDICT: FAITHFUL\x0c",  # line breaks around the one field
        "VERDICT:\u3000FAITHFUL\u3000",
        'BACK-TRANSLATION: It prints "VERDICT : MISMATCH" mid-line.\nVERDICT: FAITHFUL',
    ],
)
def test_a_reply_both_readings_agree_on_stays_ok(text: str) -> None:
    assert read(text) == (OK, FAITHFUL)


@pytest.mark.parametrize(
    "hidden",
    [
        "VERD\u0131CT: MISMATCH",  # dotless i: ASCII letter case only, in both readings
        "\u2028VERD\u0131CT: MISMATCH",
        "V\u0415RDICT: MISMATCH",  # Cyrillic capital IE: look-alikes are not folded
        "\u0412ERDICT: MISMATCH",  # Cyrillic capital VE
        "VERDICT\u2236 MISMATCH",  # RATIO, which NFKC keeps
        "\u1d20ERDICT: MISMATCH",  # small capital V, which NFKC keeps
    ],
)
def test_lookalikes_nfkc_keeps_are_no_field_in_either_reading(hidden: str) -> None:
    text = f"ISSUES: none\n{hidden}\nVERDICT: FAITHFUL"
    assert read(text) == (OK, FAITHFUL)
    assert lenient_verdict_values(text) == ["faithful"]


@pytest.mark.parametrize(
    ("text", "status"),
    [
        ("no field at all\u2028VERDICT: MISMATCH", ParseStatus.MISSING),
        ("VERDICT : MISMATCH", ParseStatus.MISSING),
        ("\u200bVERDICT: FAITHFUL", ParseStatus.MISSING),
        ("VERDICT: FAITHFUL\u2028VERDICT: MISMATCH", ParseStatus.INVALID),
        ("VERDICT: maybe\n\u200bVERDICT: FAITHFUL", ParseStatus.INVALID),
        ("VERDICT: FAITHFUL\nVERDICT: MIS\u200bMATCH", ParseStatus.INVALID),
        ("VERDICT: FAITHFUL\nVERDICT: MISMATCH\n\u2060VERDICT: FAITHFUL", ParseStatus.CONFLICTING),
        ("VERDICT: FAITHFUL\r\u2028VERDICT: MISMATCH", ParseStatus.BARE_CR),
    ],
)
def test_a_reply_the_strict_reading_finds_unreadable_keeps_its_status(
    text: str, status: ParseStatus
) -> None:
    assert read(text) == (status, UNCLEAR)


def test_an_ambiguous_reply_keeps_the_strict_readings_text_fields() -> None:
    reading = parse_reply(
        "BACK-TRANSLATION: a\nISSUES: none\u2028VERDICT: MISMATCH\nVERDICT: FAITHFUL"
    )
    assert reading.parse_status is ParseStatus.AMBIGUOUS
    assert (reading.back_translation, reading.issues) == ("a", "none\u2028VERDICT: MISMATCH")
    assert not reading.is_faithful and not reading.is_mismatch


# The parser version.


def test_every_reading_carries_the_parser_version() -> None:
    for text in [CLEAN, "", "\r", "VERDICT: x"]:
        assert parse_reply(text).parser_version == PARSER_VERSION


def test_reading_is_the_shared_dataclass() -> None:
    assert isinstance(parse_reply(CLEAN), Reading)
