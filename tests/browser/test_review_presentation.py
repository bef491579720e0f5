"""How the review pages word a review's verdict and parse status, and the reasons."""

from __future__ import annotations

import pytest

from app.policy import REASON_DESCRIPTIONS, Reason
from app.vocabulary import ParseStatus, Verdict
from app.web.presentation import describe_reason, plain_prose, prose, verdict_shown

NOT_OK = [status for status in ParseStatus if status is not ParseStatus.OK]


@pytest.mark.parametrize("status", NOT_OK)
def test_every_unread_status_has_its_own_wording_and_never_looks_like_a_verdict(
    status: ParseStatus,
) -> None:
    shown = verdict_shown("unclear", status.value)
    verdict_classes = {verdict_shown(v.value, "ok").css for v in Verdict}
    assert shown.css not in verdict_classes
    assert shown.label not in {verdict_shown(v.value, "ok").label for v in Verdict}


def test_the_model_saying_unclear_is_told_apart_from_an_unreadable_reply() -> None:
    said = verdict_shown("unclear", "ok")
    unreadable = verdict_shown("unclear", "missing")
    assert said.label == "model said unclear" and said.css == "unclear"
    assert unreadable.label == "unreadable" and unreadable.css == "unreadable"


def test_a_non_ok_status_wins_over_the_verdict_it_carries() -> None:
    assert verdict_shown("faithful", "truncated").label == "truncated"
    assert verdict_shown("mismatch", "provider_error").label == "provider error"


@pytest.mark.parametrize("verdict", list(Verdict))
def test_ok_verdicts_are_shown_as_the_verdict(verdict: Verdict) -> None:
    assert verdict_shown(verdict.value, "ok").css == verdict.value


def test_an_unknown_parse_status_is_refused_rather_than_guessed() -> None:
    with pytest.raises(ValueError):
        verdict_shown("unclear", "something_new")


def test_reasons_are_described_in_the_policys_words_with_their_finding() -> None:
    assert describe_reason("judge_unclear") == REASON_DESCRIPTIONS[Reason.JUDGE_UNCLEAR]
    described = describe_reason("evidence_review:contract_text_in_input")
    assert described.startswith(REASON_DESCRIPTIONS[Reason.EVIDENCE_REVIEW])
    assert described.endswith("Finding: `contract_text_in_input`.")
    assert describe_reason("judge_mismatch:b").endswith("Judge: `b`.")
    assert describe_reason("not_a_reason") == "not_a_reason"


def test_an_ambiguous_reply_is_shown_as_unreadable_and_says_why() -> None:
    shown = verdict_shown("unclear", "ambiguous")
    assert (shown.label, shown.css) == ("unreadable", "unreadable")
    assert "(ambiguous)" in shown.explanation and "U+2028" in shown.explanation
    assert "line break" in describe_reason("judge_ambiguous")


@pytest.mark.parametrize("reason", list(Reason))
def test_every_reason_reads_as_a_sentence_with_its_code_in_code_elements(reason: Reason) -> None:
    shown = str(prose(describe_reason(f"{reason.value}:x")))
    assert "`" not in shown
    assert shown.endswith("<code>x</code>.")


def test_a_sentence_is_escaped_before_its_code_spans_become_code_elements() -> None:
    outside = 'line 1 holds `<script>alert(1)</script>` and <b onclick="x">`a&b`</b>'
    shown = str(prose(outside))
    assert shown == (
        "line 1 holds <code>&lt;script&gt;alert(1)&lt;/script&gt;</code> and "
        "&lt;b onclick=&#34;x&#34;&gt;<code>a&amp;b</code>&lt;/b&gt;"
    )
    assert str(prose("a lone ` stays a backtick")) == "a lone ` stays a backtick"
    assert plain_prose("this `-` is in ℕ") == "this “-” is in ℕ"
