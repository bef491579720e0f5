"""The summary's newer parts, pure: reasons counted once per finding, how needs_review
screenings were decided by reason, which calls are timed, supplied replies as a group of
their own, tokens per screening, the backlog, tags and days, and labels that are never cut."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.reports.charts import LABEL_EM, day_chart, label_lines, text_em
from app.reports.reasons import counted_reasons
from app.reports.stats import Rate
from app.reports.summary import Aggregates, summarize
from app.reports.text import backlog_text, duration_text, summary_text
from app.repositories.report_rows import (
    Backlog,
    DayCount,
    ReviewRow,
    ScreeningRow,
    TagCount,
    TagCounts,
    WaitingItem,
)

NOW = datetime(2025, 3, 4, 12, 0, tzinfo=UTC)
CODED = ["evidence_review", "evidence_review:contract_text_in_input"]


def review(screening_id: str, role: str = "translator", **fields: Any) -> ReviewRow:
    values: dict[str, Any] = {
        "attempt": 1, "purpose": "review", "model": "m", "prompt_version": "p",
        "verdict": "faithful", "parse_status": "ok", "latency_ms": 100, "usage": {},
        "http_status": 200,
    } | fields  # fmt: skip
    return ReviewRow(screening_id, role, **values)


def needs_review(sid: str, reasons: list[str], decided: str | None = None) -> ScreeningRow:
    return ScreeningRow(sid, "needs_review", reasons, decided, False)


def test_a_bare_evidence_reason_is_not_counted_beside_its_codes() -> None:
    assert counted_reasons(CODED) == ["evidence_review:contract_text_in_input"]
    flag = ["evidence_flag", "evidence_flag:a", "evidence_flag:b", "judge_mismatch"]
    assert counted_reasons(flag) == ["evidence_flag:a", "evidence_flag:b", "judge_mismatch"]
    # Alone (no code refines it), and beside another kind's code, the bare reason counts.
    assert counted_reasons(["evidence_review"]) == ["evidence_review"]
    assert counted_reasons(["evidence_review", "evidence_flag:a"]) == [
        "evidence_review",
        "evidence_flag:a",
    ]


def test_the_reasons_table_counts_each_finding_once() -> None:
    rows = [needs_review("a", CODED), needs_review("b", [*CODED, "translator_missing"])]
    reasons = summarize(rows, []).reasons
    assert reasons == {"evidence_review:contract_text_in_input": 2, "translator_missing": 1}


def test_needs_review_decisions_are_counted_by_reason() -> None:
    rows = [
        needs_review("a", ["translator_missing"], "faithful"),
        needs_review("b", ["translator_missing", *CODED], "mismatch"),
        needs_review("c", ["translator_missing"]),
        needs_review("d", CODED, "mismatch"),
        # Not needs_review: decided, but not counted here.
        ScreeningRow("e", "flagged", ["judge_mismatch"], "mismatch", False),
    ]
    resolutions = summarize(rows, []).resolutions
    total = resolutions.total
    assert (total.screenings, total.faithful, total.mismatch, total.undecided) == (4, 1, 2, 1)
    assert total.mismatch_share == Rate.of(2, 3)
    assert list(resolutions.by_reason) == [
        "evidence_review:contract_text_in_input",
        "translator_missing",
    ]
    missing = resolutions.by_reason["translator_missing"]
    assert (missing.screenings, missing.faithful, missing.mismatch, missing.undecided) == (
        3,
        1,
        1,
        1,
    )
    coded = resolutions.by_reason["evidence_review:contract_text_in_input"]
    assert (coded.screenings, coded.mismatch, coded.mismatch_share) == (2, 2, Rate.of(2, 2))


def test_calls_never_sent_are_not_timed_but_counted() -> None:
    rows = [
        review("a", latency_ms=0, http_status=None, parse_status="provider_error"),
        review("b", latency_ms=0, http_status=None, parse_status="provider_error"),
        # Sent: a reply in under a millisecond, and a timeout after 900 ms.
        review("c", latency_ms=0, http_status=200),
        review("d", latency_ms=900, http_status=None, parse_status="provider_error"),
    ]
    (group,) = summarize([], rows).groups
    assert (group.calls, group.calls_not_sent, group.timed_calls) == (4, 2, 2)
    assert (group.latency_p50_ms, group.latency_p95_ms) == (0, 900)
    (unsent,) = summarize([], rows[:2]).groups
    assert (unsent.latency_p50_ms, unsent.latency_p95_ms, unsent.timed_calls) == (None, None, 0)


def test_supplied_replies_are_a_group_of_their_own_labelled_supplied() -> None:
    supplied = {"model": None, "prompt_version": None, "latency_ms": None, "supplied": True}
    rows = [
        review("a", **supplied),
        # A failed provider call: no model reported, but a prompt version and a call.
        review("b", model=None, parse_status="provider_error", http_status=500),
    ]
    provider, own = summarize([], rows).groups
    assert (own.supplied, own.model, own.calls, own.timed_calls) == (True, None, 1, 0)
    assert (provider.supplied, provider.prompt_version, provider.calls) == (False, "p", 1)
    text = summary_text(summarize([], rows))
    assert "translator / supplied: 1 screenings, 1 calls" in text
    assert "translator / - / prompt p: 1 screenings, 1 calls" in text


def test_tokens_per_screening_for_each_group_and_overall() -> None:
    rows = [
        review("a", usage={"prompt_tokens": 10, "completion_tokens": 4}),
        review("a", attempt=2, purpose="format_retry", usage={"prompt_tokens": 20}),
        review("b", usage={"prompt_tokens": 30, "completion_tokens": 2}),
        review("a", "judge", usage={"prompt_tokens": 5, "reasoning_tokens": 9}),
    ]
    screenings = [ScreeningRow(s, "passed", [], None, False) for s in ("a", "b", "c")]
    summary = summarize(screenings, rows)
    judge, translator = summary.groups
    assert translator.tokens_per_screening == pytest.approx(
        {"prompt_tokens": 30.0, "completion_tokens": 3.0, "reasoning_tokens": 0.0}
    )
    assert judge.tokens_per_screening["reasoning_tokens"] == 9.0
    # 65 prompt, 6 completion, 9 reasoning tokens over 3 screenings (c made no call).
    assert summary.tokens == {"prompt_tokens": 65, "completion_tokens": 6, "reasoning_tokens": 9}
    assert summary.tokens_per_screening == pytest.approx(
        {"prompt_tokens": 65 / 3, "completion_tokens": 2.0, "reasoning_tokens": 3.0}
    )
    assert "Tokens per screening: prompt 21.7, completion 2.0, reasoning 3.0" in summary_text(
        summary
    )
    empty = summarize([], []).tokens_per_screening
    assert empty == dict.fromkeys(("prompt_tokens", "completion_tokens", "reasoning_tokens"))


def test_the_backlog_names_its_oldest_item_and_how_long_it_waited() -> None:
    oldest = WaitingItem(7, "s-7", NOW - timedelta(days=2, hours=3, minutes=4))
    backlog = Backlog(open=2, claimed=1, oldest=oldest, as_of=NOW)
    assert backlog.waiting == 3
    assert backlog.oldest_age_seconds == (2 * 86400 + 3 * 3600 + 4 * 60)
    assert backlog_text(backlog) == (
        "3 waiting (2 open, 1 claimed); the oldest, item 7 (screening s-7), waiting since "
        "2025-03-02T08:56:00+00:00 (2 d 3 h)"
    )
    assert backlog_text(Backlog(0, 0, None, NOW)) == "0 waiting (0 open, 0 claimed)"
    summary = summarize([], [], Aggregates(backlog=backlog))
    assert "Review queue: 3 waiting (2 open, 1 claimed); the oldest, item 7" in summary_text(
        summary
    )


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0 s"), (9.7, "9 s"), (60, "1 min"), (69, "1 min 9 s"), (3600, "1 h"),
     (3661, "1 h 1 min"), (86400 + 59, "1 d"), (90000, "1 d 1 h")],
)  # fmt: skip
def test_durations_show_the_largest_unit_and_the_next(seconds: float, shown: str) -> None:
    assert duration_text(seconds) == shown


def test_tags_and_days_are_printed_with_every_outcome() -> None:
    tags = TagCounts([TagCount("algebra", {"passed": 2, "flagged": 0, "needs_review": 1})], total=3)
    days = [DayCount(date(2025, 3, 1), {"passed": 1, "flagged": 2, "needs_review": 0})]
    text = summary_text(summarize([], [], Aggregates(tags=tags, days=days)))
    lines = [" ".join(line.split()) for line in text.splitlines()]
    assert "Outcomes by tag (the 1 with most screenings of 3)" in lines
    assert "tag screenings passed flagged needs_review" in lines
    assert "algebra 3 2 0 1" in lines
    assert "day screenings passed flagged needs_review" in lines
    assert "2025-03-01 3 1 2 0" in lines
    empty = summary_text(summarize([], []))
    assert "Outcomes by tag\n  (no tags)" in empty
    assert "Screenings per day (UTC)\n  (none)" in empty


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=300))
def test_a_label_is_broken_into_lines_that_fit_and_lose_nothing(label: str) -> None:
    lines = label_lines(label)
    # Only whitespace may go, at a break; every other character stays, in order.
    assert "".join(lines).split() == [] or re.sub(r"\s", "", "".join(lines)) == re.sub(
        r"\s", "", label
    )
    # A line is wider than its column only when it is one character.
    assert all(text_em(line) <= LABEL_EM or len(line) == 1 for line in lines)


def test_a_group_label_breaks_after_its_slashes() -> None:
    label = "translator / org/a-model-with-a-long-name-01 / prompt translator-v3"
    assert label_lines(label) == [
        "translator / org/",
        "a-model-with-a-long-name-01 /",
        "prompt translator-v3",
    ]
    assert label_lines("judge / m / prompt p") == ["judge / m / prompt p"]
    # A word wider than a line breaks after its last hyphen, underscore or colon that fits.
    assert label_lines("source:a-very-long-tag-of-sixty-four-characters-to-break-its-lab") == [
        "source:a-very-long-tag-of-sixty-",
        "four-characters-to-break-its-lab",
    ]


def test_days_are_columns_placed_by_date_with_gaps() -> None:
    days = [
        (date(2025, 3, 1), {"passed": 2, "flagged": 0}),
        (date(2025, 3, 4), {"passed": 1, "flagged": 1}),
    ]
    chart = day_chart("Per day", days, ["passed", "flagged"], {"passed": "#0f0", "flagged": "#f00"})
    xs = [float(x) for x in re.findall(r'<rect class="bar" x="([\d.]+)"', chart)]
    # Four days from the first to the last: the second day's two parts start 3 steps on.
    step = (880 - 250) / 4
    assert xs == [250.0, pytest.approx(250 + 3 * step), pytest.approx(250 + 3 * step)]
    assert "<title>2025-03-04: 2 (passed 1, flagged 1)</title>" in chart
    assert ">2025-03-01</text>" in chart and ">2025-03-04</text>" in chart
