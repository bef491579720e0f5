"""read_call, read_supplied and failed_call_reading: what a call's ending says comes before
the text, and only a listed completion lets the text be read for a verdict."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.contract import PARSER_VERSION, failed_call_reading, parse_reply, read_call, read_supplied
from app.contract.call import ENDINGS, Ending, ending_of
from app.vocabulary import ParseStatus, Verdict

FULL = "BACK-TRANSLATION: n + 0 = n\nISSUES: none\nVERDICT: FAITHFUL"
COMPLETE = ("stop", "end_turn", "stop_sequence", "STOP")
CUT = ("length", "max_tokens", "model_length", "model_context_window_exceeded", "MAX_TOKENS")
REFUSALS = (
    "content_filter", "refusal", "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
)  # fmt: skip
# Reasons the contract does not list, and no reason at all: what the probe of issue 32 saw
# pass under contract-2, other servers' words for a stop that is not a completion, and
# spellings no server is known to send.
UNKNOWN = (
    None, "", "error", "LENGTH", "abort", "repetition", "tool_calls", "function_call",
    "OTHER", "FINISH_REASON_UNSPECIFIED", "Stop", "END_TURN", " stop", "stop\n", "eos_token",
)  # fmt: skip


def test_the_table_is_exactly_the_reasons_named_here() -> None:
    # A reason added to or moved in the table is a contract change: it shows up here.
    assert {r for r, e in ENDINGS.items() if e is Ending.COMPLETE} == set(COMPLETE)
    assert {r for r, e in ENDINGS.items() if e is Ending.CUT} == set(CUT)
    assert {r for r, e in ENDINGS.items() if e is Ending.REFUSED} == set(REFUSALS)


@pytest.mark.parametrize("reason", COMPLETE)
def test_a_completed_call_is_read_by_the_contract(reason: str) -> None:
    assert read_call(FULL, reason) == parse_reply(FULL)
    assert read_call(FULL, reason).is_faithful
    assert read_call("VERDICT: maybe", reason).parse_status is ParseStatus.INVALID


@pytest.mark.parametrize("reason", CUT + UNKNOWN)
def test_any_other_ending_is_truncated_whatever_the_content_but_keeps_the_fields(
    reason: str | None,
) -> None:
    reading = read_call(FULL, reason)
    assert (reading.parse_status, reading.verdict) == (ParseStatus.TRUNCATED, Verdict.UNCLEAR)
    assert (reading.back_translation, reading.issues) == ("n + 0 = n", "none")
    assert reading.parser_version == PARSER_VERSION


@given(st.one_of(st.none(), st.text(max_size=30)))
def test_no_reason_outside_the_completions_gives_a_verdict(reason: str | None) -> None:
    assert read_call(FULL, reason).is_faithful is (reason in COMPLETE)


@pytest.mark.parametrize("reason", ["length", None, "error"])
@pytest.mark.parametrize("content", [None, ""])
def test_a_cut_or_unknown_ending_without_content_is_truncated(
    content: str | None, reason: str | None
) -> None:
    reading = read_call(content, reason)
    assert reading.parse_status is ParseStatus.TRUNCATED
    assert (reading.back_translation, reading.issues) == (None, None)


@pytest.mark.parametrize("content", [None, "", "  \n\t", "\u3000\r\n", "\x85"])
def test_no_or_blank_content_is_empty(content: str | None) -> None:
    reading = read_call(content, "stop")
    assert (reading.parse_status, reading.verdict) == (ParseStatus.EMPTY, Verdict.UNCLEAR)
    assert (reading.back_translation, reading.issues) == (None, None)


@pytest.mark.parametrize("reason", REFUSALS)
@pytest.mark.parametrize("content", [None, "", FULL])
def test_a_refusal_is_refused_whatever_the_content(content: str | None, reason: str) -> None:
    reading = read_call(content, reason)
    assert (reading.parse_status, reading.verdict) == (ParseStatus.REFUSED, Verdict.UNCLEAR)


def test_a_blank_reply_with_a_bare_cr_is_empty_not_bare_cr() -> None:
    # Nothing was written; a format retry is the right answer either way.
    assert read_call("\r", "stop").parse_status is ParseStatus.EMPTY
    assert read_supplied("\r").parse_status is ParseStatus.EMPTY


def test_ending_of_fails_closed() -> None:
    assert ending_of(None) is Ending.CUT
    assert ending_of("a reason no server sends") is Ending.CUT
    assert ending_of("stop") is Ending.COMPLETE


# --- Supplied replies: no call, so no finish reason, and whole by nature ---


def test_a_supplied_reply_is_read_by_the_contract_without_a_finish_reason() -> None:
    assert read_supplied(FULL) == parse_reply(FULL)
    assert read_supplied(FULL).is_faithful
    assert read_supplied("VERDICT: maybe").parse_status is ParseStatus.INVALID


@pytest.mark.parametrize("reply", ["", "  \n\t", "\u3000\r\n"])
def test_a_blank_supplied_reply_is_empty(reply: str) -> None:
    reading = read_supplied(reply)
    assert (reading.parse_status, reading.verdict) == (ParseStatus.EMPTY, Verdict.UNCLEAR)


@pytest.mark.parametrize(
    "status",
    [ParseStatus.PROVIDER_ERROR, ParseStatus.EMPTY, ParseStatus.TRUNCATED, ParseStatus.REFUSED],
)
def test_failed_call_reading_is_unclear_without_fields(status: ParseStatus) -> None:
    reading = failed_call_reading(status)
    assert (reading.parse_status, reading.verdict) == (status, Verdict.UNCLEAR)
    assert (reading.back_translation, reading.issues) == (None, None)
    assert reading.parser_version == PARSER_VERSION


@pytest.mark.parametrize(
    "status",
    [
        ParseStatus.OK,
        ParseStatus.MISSING,
        ParseStatus.INVALID,
        ParseStatus.CONFLICTING,
        ParseStatus.BARE_CR,
        ParseStatus.AMBIGUOUS,
    ],
)
def test_failed_call_reading_rejects_statuses_of_a_reply_text(status: ParseStatus) -> None:
    with pytest.raises(ValueError, match="describes a reply"):
        failed_call_reading(status)
