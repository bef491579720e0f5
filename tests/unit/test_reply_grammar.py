"""The `grammar` reply format's GBNF (app/contract/grammar.py), read by an independent little
GBNF reader (tests/support/gbnf.py): every reply it admits is read `ok` by the contract's
parser, with the strict and lenient readings agreeing; the replies a careful model writes
are admitted; a cut reply, a CR, a Unicode line break, a format character, a chat-template
marker or a later line that reads as a field are not; and its longest reply is the one
`worst_case_tokens` (the caps `local-model start` prints) is built on."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.contract import parse_reply
from app.contract.grammar import (
    GRAMMAR_VERSION,
    LINE_CHARS,
    reply_grammar,
    worst_case_characters,
    worst_case_tokens,
)
from app.contract.lenient import lenient_verdict_values
from app.vocabulary import ParseStatus, Role, Verdict
from tests.support.gbnf import compile_gbnf

PATTERNS = {role: re.compile(compile_gbnf(reply_grammar(role)).regex) for role in Role}

CAREFUL = {
    Role.TRANSLATOR: [
        "BACK-TRANSLATION: For every natural number n, n + 0 = n.\nVERDICT: FAITHFUL\nISSUES: none",
        "BACK-TRANSLATION: For all real x > 0, log x is at most x - 1.\nVERDICT: MISMATCH\n"
        "ISSUES:\n- the informal statement allows x = 0\n- log base 2 vs natural log\n",
        "BACK-TRANSLATION: It is unclear what f means here.\n\nVERDICT: UNCLEAR\n"
        "ISSUES: f is not defined in the header.\n",
        "BACK-TRANSLATION:\nIf a divides b, then a is at most b... (on N, with b > 0).\n"
        "VERDICT: FAITHFUL\nISSUES: none\n",
    ],
    Role.JUDGE: [
        "VERDICT: FAITHFUL\nISSUES: none",
        "VERDICT: MISMATCH\nISSUES:\n1. n - 1 truncates at 0 on N.\n2. Verifies only n >= 2.\n",
        "VERDICT: UNCLEAR\nISSUES: the header is missing; Issues remain with 'x / 2'.",
    ],
}

NOT_ADMITTED = {
    "a CR": "VERDICT: FAITHFUL\r\nISSUES: none",
    "a bare CR": "VERDICT: FAITHFUL\nISSUES: none\rVERDICT: MISMATCH",
    "U+2028": "VERDICT: FAITHFUL\nISSUES: none\u2028VERDICT: MISMATCH",
    "NEL": "VERDICT: FAITHFUL\nISSUES: none\x85VERDICT: MISMATCH",
    "VT": "VERDICT: FAITHFUL\nISSUES: none\x0bVERDICT: MISMATCH",
    "FF": "VERDICT: FAITHFUL\nISSUES: none\x0cVERDICT: MISMATCH",
    "FS": "VERDICT: FAITHFUL\nISSUES: none\x1cVERDICT: MISMATCH",
    "a zero-width space": "VERDICT: FAITHFUL\nISSUES: none\n\u200bVERDICT: MISMATCH",
    "a tab": "VERDICT: FAITHFUL\nISSUES:\tnone",
    "non-ASCII": "VERDICT: FAITHFUL\nISSUES: x \u2264 y",
    "a chat-template marker": "VERDICT: FAITHFUL\nISSUES: none<end_of_turn>",
    "a ChatML marker": "VERDICT: FAITHFUL\nISSUES: none<|im_end|>",
    # Every marker begins with `<`, so no `<` at all: "less than", as plain English says.
    "a less-than sign": "VERDICT: MISMATCH\nISSUES: x < y in Lean",
    "a later verdict line": "VERDICT: FAITHFUL\nISSUES: none\nverdict: MISMATCH",
    "a later verdict line, spaced": "VERDICT: FAITHFUL\nISSUES: none\nVerdict : MISMATCH",
    "an indented verdict line": "VERDICT: FAITHFUL\nISSUES: none\n  VERDICT: MISMATCH",
    "a later issues line": "VERDICT: FAITHFUL\nISSUES: none\nIssues: more",
    "a later back-translation line": "VERDICT: FAITHFUL\nISSUES: x\nBack-Translation: y",
    "a lowercase verdict value": "VERDICT: faithful\nISSUES: none",
    "a verdict with more on its line": "VERDICT: FAITHFUL.\nISSUES: none",
    "markdown": "**VERDICT:** FAITHFUL\nISSUES: none",
    "a preamble": "Sure!\nVERDICT: FAITHFUL\nISSUES: none",
    "no issues field": "VERDICT: FAITHFUL\n",
    "a line too long": "VERDICT: FAITHFUL\nISSUES: " + "x" * (LINE_CHARS + 1),
    "a fifth line": "VERDICT: FAITHFUL\nISSUES: a\nb\nc\nd\ne",
    "the translator's shape": "BACK-TRANSLATION: x\nVERDICT: FAITHFUL\nISSUES: none",
}


def admitted(role: Role, reply: str) -> bool:
    return PATTERNS[role].fullmatch(reply) is not None


def test_the_grammar_is_versioned() -> None:
    assert GRAMMAR_VERSION == "grammar-1"


@pytest.mark.parametrize("role", list(Role))
def test_every_careful_contract_reply_is_admitted(role: Role) -> None:
    for reply in CAREFUL[role]:
        assert admitted(role, reply), reply
        assert parse_reply(reply).parse_status is ParseStatus.OK, reply


@pytest.mark.parametrize("case", list(NOT_ADMITTED))
def test_what_could_be_read_two_ways_or_is_not_the_contract_is_not_admitted(case: str) -> None:
    assert not admitted(Role.JUDGE, NOT_ADMITTED[case])


@pytest.mark.parametrize("role", list(Role))
def test_a_reply_cut_before_its_issues_field_is_not_admitted(role: Role) -> None:
    reply = CAREFUL[role][1]
    for end in range(reply.index("\nISSUES:") + len("\nISSUES")):
        assert not admitted(role, reply[:end]), reply[:end]


@pytest.mark.parametrize("role", list(Role))
def test_the_longest_reply_is_the_worst_case_the_caps_are_built_on(role: Role) -> None:
    assert compile_gbnf(reply_grammar(role)).longest == worst_case_characters(role)
    # ASCII only, so a character is a byte; a token is at least a byte, plus the end token.
    assert worst_case_tokens(role) == worst_case_characters(role) + 1


def _replies(role: Role) -> st.SearchStrategy[str]:
    return st.from_regex(PATTERNS[role], fullmatch=True)


@pytest.mark.parametrize("role", list(Role))
def test_every_reply_the_grammar_admits_is_read_ok_with_the_verdict_it_spells(role: Role) -> None:
    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_replies(role))
    def check(reply: str) -> None:
        reading = parse_reply(reply)
        assert reading.parse_status is ParseStatus.OK, reply
        spelled = re.search(r"^VERDICT: (\w+)$", reply, re.M)
        assert spelled is not None
        assert reading.verdict is Verdict(spelled.group(1).lower())
        assert lenient_verdict_values(reply) == [reading.verdict.value]
        assert reading.issues is not None
        assert (reading.back_translation is not None) is (role is Role.TRANSLATOR)

    check()
