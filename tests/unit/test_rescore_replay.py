"""Replaying stored calls with a parser, and the diff against what is stored. Pure."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from app.contract import PARSER_VERSION, read_call
from app.contract.formats import READER_VERSIONS, read_reply
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.evidence import EVIDENCE_VERSION
from app.policy import POLICY_VERSION
from app.repositories.rescore_rows import CurrentState, StoredCall
from app.rescore.diff import Diff, compare
from app.rescore.replay import Parser, replay, replayable, reread
from app.vocabulary import Outcome, Pair, ParseStatus, Purpose, ReplyFormat, Role, Verdict
from tests.support.scripted_openai import contract_reply

PAIR = Pair("For every natural number n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n := by sorry")
FAITHFUL = contract_reply("FAITHFUL")
MISMATCH = contract_reply("MISMATCH", issues="the conclusion is weaker")
# A back-translation quoting the contract: a reader that searches anywhere sees FAITHFUL.
QUOTING = contract_reply(
    "MISMATCH",
    back_translation='The statement echoes the line "VERDICT: FAITHFUL" but drops n > 0.',
    issues="drops the hypothesis n > 0",
)
UNREADABLE = "I think this is fine.\n"
T, J = Role.TRANSLATOR, Role.JUDGE


def naive_read(reply: ProviderReply) -> Reading:
    """An old, wrong parser: the first VERDICT anywhere in the text."""
    found = re.search(r"VERDICT:\s*(FAITHFUL|MISMATCH|UNCLEAR)", reply.content or "")
    if found is None:
        return Reading(Verdict.UNCLEAR, ParseStatus.MISSING, None, None, "naive-0")
    return Reading(Verdict(found.group(1).lower()), ParseStatus.OK, None, None, "naive-0")


NAIVE = Parser(naive_read, "naive-0")


def old_reading(verdict: Verdict, status: ParseStatus) -> Reading:
    return Reading(verdict, status, None, None, "old")


def stored(
    review_id: int,
    role: Role,
    attempt: int,
    raw: str | None,
    purpose: Purpose = Purpose.REVIEW,
    finish: str | None = "stop",
    reading: Reading | None = None,
) -> StoredCall:
    return StoredCall(
        review_id, role, attempt, purpose, raw, finish, reading or read_call(raw, finish)
    )


def outcome(calls: list[StoredCall], confirmations: int = 0, retries: int = 2) -> Outcome:
    return replay(
        PAIR, calls, confirmations=confirmations, format_retries=retries
    ).ruling.ruling.outcome


def test_the_current_parser_reproduces_what_it_stored() -> None:
    calls = [stored(1, T, 1, FAITHFUL), stored(2, J, 1, FAITHFUL)]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert replayed.ruling.ruling.outcome is Outcome.PASSED
    assert replayed.readings == {1: calls[0].reading, 2: calls[1].reading}
    assert not replayed.incomplete


def test_a_quoted_verdict_read_by_an_old_parser_is_caught_on_replay() -> None:
    old = [
        stored(1, T, 1, QUOTING, reading=naive_read(ProviderReply(QUOTING, "stop"))),
        stored(2, J, 1, FAITHFUL, reading=naive_read(ProviderReply(FAITHFUL, "stop"))),
    ]
    assert old[0].reading.verdict is Verdict.FAITHFUL  # what the old parser stored
    assert outcome(old) is Outcome.FLAGGED
    by_old_parser = replay(PAIR, old, confirmations=0, format_retries=2, parser=NAIVE)
    assert by_old_parser.ruling.ruling.outcome is Outcome.PASSED


def test_a_format_retry_the_new_parser_does_not_need_is_left_unused() -> None:
    # The old parser could not read attempt 1; the new one reads it as MISMATCH. The plan
    # takes the first ok reading: the retry's FAITHFUL no longer counts.
    calls = [
        stored(1, T, 1, MISMATCH, reading=old_reading(Verdict.UNCLEAR, ParseStatus.INVALID)),
        stored(2, T, 2, FAITHFUL, purpose=Purpose.FORMAT_RETRY),
        stored(3, J, 1, FAITHFUL),
    ]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert replayed.ruling.ruling.reasons == ("translator_mismatch",)
    assert not replayed.incomplete


def test_a_format_retry_that_was_never_made_is_not_invented() -> None:
    # The old parser read attempt 1 as FAITHFUL; the new one cannot read it and would ask
    # for a format retry that was never made: the unreadable reading stands.
    calls = [
        stored(1, T, 1, UNREADABLE, reading=old_reading(Verdict.FAITHFUL, ParseStatus.OK)),
        stored(2, J, 1, FAITHFUL),
    ]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert replayed.incomplete
    assert replayed.ruling.ruling.outcome is Outcome.NEEDS_REVIEW
    assert replayed.ruling.ruling.reasons == ("translator_missing",)


def test_a_confirmation_that_was_never_made_leaves_the_mismatch_unconfirmed() -> None:
    # Stored as FAITHFUL (no confirmation asked); replayed as MISMATCH with k = 1.
    calls = [
        stored(1, T, 1, QUOTING, reading=naive_read(ProviderReply(QUOTING, "stop"))),
        stored(2, J, 1, FAITHFUL),
    ]
    replayed = replay(PAIR, calls, confirmations=1, format_retries=2)
    assert replayed.incomplete
    assert replayed.ruling.ruling.reasons == ("unconfirmed_translator_mismatch",)
    assert replayed.ruling.ruling.outcome is Outcome.NEEDS_REVIEW


def test_stored_confirmations_are_used_in_order() -> None:
    calls = [
        stored(1, T, 1, MISMATCH),
        stored(2, T, 2, FAITHFUL, purpose=Purpose.CONFIRMATION),
        stored(3, T, 3, MISMATCH, purpose=Purpose.CONFIRMATION),
        stored(4, J, 1, FAITHFUL),
    ]
    assert outcome(calls, confirmations=2) is Outcome.FLAGGED
    assert outcome(calls[:2] + calls[3:], confirmations=1) is Outcome.NEEDS_REVIEW


def test_failed_and_refused_calls_keep_their_status_whatever_the_parser() -> None:
    for status in (ParseStatus.PROVIDER_ERROR, ParseStatus.REFUSED):
        recorded = Reading(Verdict.UNCLEAR, status, None, None, PARSER_VERSION)
        call = stored(1, T, 1, FAITHFUL, reading=recorded)
        assert reread(call, NAIVE).parse_status is status


def test_truncation_is_read_from_the_finish_reason_again() -> None:
    call = stored(1, T, 1, FAITHFUL, finish="length")
    assert reread(call).parse_status is ParseStatus.TRUNCATED


def test_a_role_without_its_first_call_cannot_be_replayed() -> None:
    calls = [stored(1, T, 1, FAITHFUL)]
    assert not replayable(calls)
    with pytest.raises(ValueError, match="nothing to replay"):
        replay(PAIR, calls, confirmations=0, format_retries=2)


def state(
    outcome: str, reasons: tuple[str, ...] = (), policy: str = POLICY_VERSION
) -> CurrentState:
    return CurrentState("s1", outcome, reasons, (), policy, EVIDENCE_VERSION, datetime.now(UTC))


def test_compare_counts_a_moved_outcome_with_its_reasons_and_readings() -> None:
    old = [
        stored(1, T, 1, QUOTING, reading=naive_read(ProviderReply(QUOTING, "stop"))),
        stored(2, J, 1, FAITHFUL, reading=naive_read(ProviderReply(FAITHFUL, "stop"))),
    ]
    replayed = replay(PAIR, old, confirmations=0, format_retries=2)
    before = {c.review_id: c.reading for c in old}
    change = compare(state("passed"), replayed.ruling, before, replayed.readings)
    assert change is not None and not change.unversioned
    assert change.parser_version_before == "naive-0"
    assert change.parser_version == PARSER_VERSION
    # Both readings are written (a new version), only the translator's moved.
    assert set(change.readings) == {1, 2}
    diff = Diff(PARSER_VERSION, POLICY_VERSION, EVIDENCE_VERSION)
    diff.add(change, incomplete=False)
    diff.add(None, incomplete=False)
    summary = diff.as_json()
    assert summary["transitions"] == {"passed -> flagged": 1}
    assert summary["by_transition"] == {"passed -> flagged": {"+translator_mismatch": 1}}
    assert summary["reasons_added"] == {"translator_mismatch": 1}
    assert summary["reasons_removed"] == {}
    assert summary["readings"] == {"ok/faithful -> ok/mismatch": 1}
    assert (summary["considered"], summary["changed"], summary["unchanged"]) == (2, 1, 1)
    assert summary["changed_ids"] == ["s1"]


def test_a_change_under_unchanged_versions_is_marked_unversioned() -> None:
    calls = [stored(1, T, 1, FAITHFUL), stored(2, J, 1, FAITHFUL)]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    before = {c.review_id: c.reading for c in calls}
    # Stored as flagged by the same versions that now say passed: a code change without
    # a version bump.
    flagged = state("flagged", ("judge_mismatch",))
    change = compare(flagged, replayed.ruling, before, replayed.readings)
    assert change is not None and change.unversioned
    older = state("flagged", ("judge_mismatch",), "policy-0")
    bumped = compare(older, replayed.ruling, before, replayed.readings)
    assert bumped is not None and not bumped.unversioned
    assert compare(state("passed"), replayed.ruling, before, replayed.readings) is None


def test_changed_ids_are_cut_short_only_when_asked() -> None:
    diff = Diff("p", "q", "e")
    diff.changed_ids.extend(f"s{i}" for i in range(5))
    assert diff.as_json(max_ids=3)["changed_ids"] == ["s0", "s1", "s2"]
    assert diff.as_json(max_ids=3)["changed_ids_truncated"] is True
    assert diff.as_json()["changed_ids_truncated"] is False


# --- The retry limit the pipeline had, refusals, restamps ------------------------------


def unreadable_call(review_id: int, attempt: int, purpose: Purpose) -> StoredCall:
    return stored(review_id, T, attempt, UNREADABLE, purpose=purpose)


def test_exhausted_retries_are_not_asked_again_whatever_the_setting_is_now() -> None:
    calls = [
        unreadable_call(1, 1, Purpose.REVIEW),
        unreadable_call(2, 2, Purpose.FORMAT_RETRY),
        stored(3, J, 1, FAITHFUL),
    ]
    for setting in (0, 1, 5):
        replayed = replay(PAIR, calls, confirmations=0, format_retries=setting)
        assert not replayed.incomplete, setting
        assert replayed.ruling.ruling.reasons == ("translator_missing",)


def test_retries_made_under_a_higher_limit_are_all_used() -> None:
    calls = [
        unreadable_call(1, 1, Purpose.REVIEW),
        unreadable_call(2, 2, Purpose.FORMAT_RETRY),
        stored(3, T, 3, FAITHFUL, purpose=Purpose.FORMAT_RETRY),
        stored(4, J, 1, FAITHFUL),
    ]
    assert outcome(calls, retries=1) is Outcome.PASSED
    assert outcome(calls, retries=0) is Outcome.PASSED


def test_a_supplied_reply_was_never_retried_so_none_is_missing() -> None:
    calls = [
        replace(stored(1, T, 1, UNREADABLE), supplied=True),
        replace(stored(2, J, 1, FAITHFUL), supplied=True),
    ]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    assert not replayed.incomplete
    assert replayed.ruling.ruling.outcome is Outcome.NEEDS_REVIEW


def test_a_content_filter_refusal_keeps_what_the_model_wrote() -> None:
    call = stored(1, T, 1, QUOTING, finish="content_filter")
    assert call.reading.parse_status is ParseStatus.REFUSED
    again = reread(call)
    assert again == call.reading
    assert again.back_translation is not None and "drops n > 0" in again.back_translation


def test_a_refusal_in_its_own_field_stays_a_refusal_without_fields() -> None:
    recorded = Reading(Verdict.UNCLEAR, ParseStatus.REFUSED, None, None, PARSER_VERSION)
    again = reread(stored(1, T, 1, FAITHFUL, reading=recorded))
    assert (again.parse_status, again.back_translation) == (ParseStatus.REFUSED, None)


def test_an_outcome_kept_under_a_new_parser_is_a_restamp() -> None:
    by_older = replace(read_call(FAITHFUL, "stop"), parser_version="contract-0")
    old = [stored(1, T, 1, FAITHFUL, reading=by_older), stored(2, J, 1, FAITHFUL, reading=by_older)]
    replayed = replay(PAIR, old, confirmations=0, format_retries=2)
    before = {c.review_id: c.reading for c in old}
    change = compare(state("passed"), replayed.ruling, before, replayed.readings)
    assert change is not None and not change.moved and not change.unversioned
    assert set(change.readings) == {1, 2}
    diff = Diff(PARSER_VERSION, POLICY_VERSION, EVIDENCE_VERSION)
    diff.add(change, incomplete=False)
    assert (diff.unchanged, diff.restamped, diff.changed, diff.changed_ids) == (1, 1, 0, [])


def test_a_reading_that_differs_under_its_own_version_is_unversioned() -> None:
    # Same outcome, same version, but the back-translation reads differently: the parser
    # changed without its version.
    stale = replace(read_call(FAITHFUL, "stop"), back_translation="something else")
    calls = [stored(1, T, 1, FAITHFUL, reading=stale), stored(2, J, 1, FAITHFUL)]
    replayed = replay(PAIR, calls, confirmations=0, format_retries=2)
    before = {c.review_id: c.reading for c in calls}
    change = compare(state("passed"), replayed.ruling, before, replayed.readings)
    assert change is not None and not change.moved and change.unversioned


@pytest.mark.parametrize("reply_format", [ReplyFormat.TOOL, ReplyFormat.JSON])
def test_a_structured_finish_reason_refusal_keeps_its_readers_version(
    reply_format: ReplyFormat,
) -> None:
    # Refused by the format's own reader (content_filter), recorded under tool-1 / json-1:
    # read again, it is the same reading, not a contract-3 one (a spurious restamp).
    recorded = read_reply(reply_format, T, ProviderReply(None, "content_filter"))
    call = replace(
        stored(1, T, 1, None, finish="content_filter", reading=recorded), reply_format=reply_format
    )
    assert recorded.parser_version == READER_VERSIONS[reply_format]
    assert reread(call) == recorded
