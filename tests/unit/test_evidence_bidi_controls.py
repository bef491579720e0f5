"""Check `bidi_control` (evidence-7): every bidirectional control in any field of a pair is
found, named by its code point and pointed at; letters of right-to-left scripts and other
invisible characters are not; and a pair holding one never passes, whatever the replies."""

from __future__ import annotations

import unicodedata

import pytest

from app.contract.reading import Reading
from app.evidence import CHECKS, EVIDENCE_VERSION, run_checks
from app.evidence.bidi_controls import BIDI_CONTROLS, find_bidi_controls
from app.policy import RoleResult, decide
from app.vocabulary import Outcome, Pair, ParseStatus, Severity, Verdict

BIDI = next(check for check in CHECKS if check.code == "bidi_control")
# The embeddings, overrides and isolates (UAX #9), and the three implicit marks.
EXPLICIT = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
MARKS = ["\u200e", "\u200f", "\u061c"]
CLEAN = "theorem t (x : ℝ) : x ^ 2 ≥ 0 := by sorry"
FAITHFUL = RoleResult(Reading(Verdict.FAITHFUL, ParseStatus.OK, None, None, "test-parser"))


def test_the_check_is_severity_review_under_evidence_7() -> None:
    assert EVIDENCE_VERSION == "evidence-8"
    assert BIDI.severity is Severity.REVIEW
    assert set(BIDI_CONTROLS) == {*EXPLICIT, *MARKS}


@pytest.mark.parametrize("control", EXPLICIT + MARKS)
def test_each_control_is_found_named_and_pointed_at(control: str) -> None:
    formal = f"theorem t (a b : ℕ) :\n  a <{control} b := by sorry"
    [finding] = BIDI(Pair("Show that a < b.", formal))
    assert (finding.code, finding.severity) == ("bidi_control", Severity.REVIEW)
    assert (finding.field, finding.line, finding.column, finding.end_column) == ("formal", 2, 5, 6)
    name = f"U+{ord(control):04X} {unicodedata.name(control)}"
    assert name in finding.message and f"({BIDI_CONTROLS[control]})" in finding.message
    assert "line 2, column 6" in finding.message
    assert control not in finding.message  # the message names it, never carries it


def test_every_field_is_read_informal_formal_header_in_that_order() -> None:
    pair = Pair("Show \u2067that\u2069 x = 1.", "theorem t : 1\u202e = 1", "import\u200f Mathlib")
    found = [(f.field, f.line, f.column) for f in BIDI(pair)]
    assert found == [
        ("informal", 1, 5),
        ("informal", 1, 10),
        ("formal", 1, 13),
        ("header", 1, 6),
    ]


def test_one_finding_per_field_and_control_at_its_first_place_with_its_count() -> None:
    formal = "theorem t : 1 = 1\n" + "\u202e" * 3 + " x\u202e\n\u202e"
    [finding] = BIDI(Pair("", formal))
    assert (finding.line, finding.column) == (2, 0)
    assert "5 times, first at line 2, column 1" in finding.message


def test_a_hundred_thousand_controls_give_a_bounded_number_of_findings() -> None:
    every = "".join(BIDI_CONTROLS) * 10_000
    found = find_bidi_controls(Pair(every, every, every))
    assert len(found) == 3 * len(BIDI_CONTROLS)


@pytest.mark.parametrize(
    "text",
    [
        "Montrer que x ≥ 0 pour tout réel x.",
        "הוכח ש- x ≥ 0 לכל x ממשי.",  # Hebrew letters: right-to-left, but no control
        "أثبت أن x ≥ 0",  # Arabic letters
        "zero\u200bwidth\u2060joiner\ufeff and a soft\u00adhyphen",  # invisible, not bidi
        "a \u206a deprecated format character",  # U+206A..206F: not in UAX #9's controls
    ],
)
def test_right_to_left_letters_and_other_invisibles_are_not_bidi_controls(text: str) -> None:
    assert BIDI(Pair(text, CLEAN, text)) == []


@pytest.mark.parametrize("control", EXPLICIT + MARKS)
def test_two_faithful_replies_never_pass_a_pair_holding_a_control(control: str) -> None:
    findings = run_checks(Pair("Show that x ^ 2 ≥ 0.", CLEAN.replace("≥", f"{control}≥")))
    assert [f.code for f in findings] == ["bidi_control"]
    ruling = decide(FAITHFUL, FAITHFUL, findings, 0)
    assert ruling.outcome is Outcome.NEEDS_REVIEW
    assert "evidence_review:bidi_control" in ruling.reasons
