"""Replaying calls under contract-3's finish-reason table (app/contract/call.py). Pure.

A provider's reply stored as ok/faithful under contract-2 with a finish reason that is not a
listed completion is read again as `truncated`; a supplied reply, which never had a finish
reason, is read again as it was decided."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.contract import PARSER_VERSION, parse_reply
from app.contract.reading import Reading
from app.rescore.replay import replay, reread
from app.vocabulary import Outcome, ParseStatus, Verdict
from tests.unit.test_rescore_replay import FAITHFUL, PAIR, J, T, stored

# How contract-2 read FAITHFUL whatever the finish reason but `length` and `content_filter`.
CONTRACT_2 = replace(parse_reply(FAITHFUL), parser_version="contract-2")


@pytest.mark.parametrize("finish", [None, "error", "max_tokens", "model_length", "LENGTH"])
def test_a_reply_passed_under_a_reason_no_longer_complete_is_truncated(
    finish: str | None,
) -> None:
    translator = stored(1, T, 1, FAITHFUL, finish=finish, reading=CONTRACT_2)
    calls = [translator, stored(2, J, 1, FAITHFUL)]
    again = reread(calls[0])
    assert (again.parse_status, again.verdict) == (ParseStatus.TRUNCATED, Verdict.UNCLEAR)
    assert again.back_translation == CONTRACT_2.back_translation
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert replayed.ruling.ruling.outcome is Outcome.NEEDS_REVIEW
    assert replayed.ruling.ruling.reasons == ("translator_truncated",)
    # The plan would now re-ask the translator: a retry that was never made.
    assert replayed.incomplete


def test_supplied_replies_without_a_finish_reason_read_again_as_they_were_decided() -> None:
    calls = [
        replace(stored(1, T, 1, FAITHFUL, finish=None, reading=CONTRACT_2), supplied=True),
        replace(stored(2, J, 1, FAITHFUL, finish=None, reading=CONTRACT_2), supplied=True),
    ]
    assert reread(calls[0]) == replace(CONTRACT_2, parser_version=PARSER_VERSION)
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert replayed.ruling.ruling.outcome is Outcome.PASSED
    assert not replayed.incomplete


def test_a_failed_call_stays_a_provider_error() -> None:
    failed = Reading(Verdict.UNCLEAR, ParseStatus.PROVIDER_ERROR, None, None, "contract-2")
    again = reread(stored(1, T, 1, None, finish=None, reading=failed))
    assert (again.parse_status, again.back_translation) == (ParseStatus.PROVIDER_ERROR, None)
