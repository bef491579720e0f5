"""read_call and failed_call_reading: what a call's ending says comes before the text."""

from __future__ import annotations

import pytest

from app.contract import PARSER_VERSION, failed_call_reading, parse_reply, read_call
from app.vocabulary import ParseStatus, Verdict

FULL = "BACK-TRANSLATION: n + 0 = n\nISSUES: none\nVERDICT: FAITHFUL"


def test_a_stopped_call_is_read_by_the_contract() -> None:
    assert read_call(FULL, "stop") == parse_reply(FULL)
    assert read_call(FULL, None).is_faithful
    assert read_call("VERDICT: maybe", "stop").parse_status is ParseStatus.INVALID


def test_length_is_truncated_whatever_the_content_says_but_keeps_the_fields() -> None:
    reading = read_call(FULL, "length")
    assert (reading.parse_status, reading.verdict) == (ParseStatus.TRUNCATED, Verdict.UNCLEAR)
    assert (reading.back_translation, reading.issues) == ("n + 0 = n", "none")
    assert reading.parser_version == PARSER_VERSION


@pytest.mark.parametrize("content", [None, ""])
def test_length_without_content_is_truncated(content: str | None) -> None:
    reading = read_call(content, "length")
    assert reading.parse_status is ParseStatus.TRUNCATED
    assert (reading.back_translation, reading.issues) == (None, None)


@pytest.mark.parametrize("content", [None, "", "  \n\t", "\u3000\r\n", "\x85"])
def test_no_or_blank_content_is_empty(content: str | None) -> None:
    reading = read_call(content, "stop")
    assert (reading.parse_status, reading.verdict) == (ParseStatus.EMPTY, Verdict.UNCLEAR)
    assert (reading.back_translation, reading.issues) == (None, None)


@pytest.mark.parametrize("content", [None, "", FULL])
def test_content_filter_is_refused_whatever_the_content(content: str | None) -> None:
    reading = read_call(content, "content_filter")
    assert (reading.parse_status, reading.verdict) == (ParseStatus.REFUSED, Verdict.UNCLEAR)


def test_a_blank_reply_with_a_bare_cr_is_empty_not_bare_cr() -> None:
    # Nothing was written; a format retry is the right answer either way.
    assert read_call("\r", "stop").parse_status is ParseStatus.EMPTY


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
