"""The pure summary: rows in, report out, and its plain-text rendering."""

from __future__ import annotations

from typing import Any

import pytest

from app.reports.stats import Rate
from app.reports.summary import reading_of, summarize
from app.reports.text import rate_text, summary_text
from app.repositories.report_rows import ReviewRow, ScreeningRow


def review(screening_id: str, role: str = "judge", attempt: int = 1, **fields: Any) -> ReviewRow:
    values: dict[str, Any] = {
        "purpose": "review", "model": "m", "prompt_version": "p", "verdict": "faithful",
        "parse_status": "ok", "latency_ms": 100, "usage": {},
    } | fields  # fmt: skip
    return ReviewRow(screening_id, role, attempt, **values)


def screening(
    sid: str, outcome: str = "passed", decided: str | None = None, audit: bool = False
) -> ScreeningRow:
    return ScreeningRow(sid, outcome, [], decided, audit)


@pytest.mark.parametrize(
    ("status", "verdict", "reading"),
    [
        ("ok", "mismatch", "ok"),
        ("ok", "unclear", "model_unclear"),
        ("missing", "unclear", "unreadable"),
        ("invalid", "unclear", "unreadable"),
        ("conflicting", "unclear", "unreadable"),
        ("bare_cr", "unclear", "unreadable"),
        ("ambiguous", "unclear", "unreadable"),
        ("truncated", "unclear", "truncated"),
        ("empty", "unclear", "empty"),
        ("provider_error", "unclear", "provider_error"),
        ("refused", "unclear", "refused"),
    ],
)
def test_readings_keep_the_model_saying_unclear_apart(
    status: str, verdict: str, reading: str
) -> None:
    assert reading_of(review("s", parse_status=status, verdict=verdict)) == reading


def test_the_final_reading_ignores_confirmations() -> None:
    rows = [
        review("s", attempt=1, parse_status="missing", verdict="unclear"),
        review("s", attempt=2, purpose="format_retry"),
        review("s", attempt=3, purpose="confirmation", parse_status="empty", verdict="unclear"),
    ]
    (group,) = summarize([screening("s")], rows).groups
    assert group.readings["ok"] == 1 and group.readings["empty"] == 0
    assert group.format_retry == Rate.of(1, 1)
    assert group.retry_recovered == Rate.of(1, 1)
    assert group.calls == 3


def test_a_retry_that_stays_unreadable_did_not_recover() -> None:
    rows = [
        review("s", parse_status="invalid", verdict="unclear"),
        review("s", attempt=2, purpose="format_retry", parse_status="bare_cr", verdict="unclear"),
    ]
    (group,) = summarize([screening("s")], rows).groups
    assert group.retry_recovered == Rate.of(0, 1)
    assert group.readings["unreadable"] == 1


def test_tokens_sum_and_skip_missing_counts() -> None:
    rows = [
        review("a", usage={"prompt_tokens": 3, "completion_tokens": 2, "reasoning_tokens": 1}),
        review("b", usage={"prompt_tokens": 4, "completion_tokens": None}),
    ]
    (group,) = summarize([screening("a"), screening("b")], rows).groups
    assert group.tokens == {"prompt_tokens": 7, "completion_tokens": 2, "reasoning_tokens": 1}


def test_latency_percentiles_ignore_unknown_latencies() -> None:
    rows = [review(str(i), latency_ms=ms) for i, ms in enumerate([10, 20, 30, 40, None])]
    (group,) = summarize([], rows).groups
    assert (group.latency_p50_ms, group.latency_p95_ms) == (20, 40)


def test_agreement_counts_only_screenings_where_both_readings_are_ok() -> None:
    rows = [
        review("a", "translator"), review("a", "judge"),
        review("b", "translator", verdict="mismatch"), review("b", "judge", verdict="mismatch"),
        review("c", "translator"), review("c", "judge", verdict="mismatch"),
        review("d", "translator"), review("d", "judge", parse_status="invalid", verdict="unclear"),
    ]  # fmt: skip
    agreement = summarize([], rows).agreement
    # (f,f) (m,m) (f,m): po 2/3; marginals t f2 m1, j f1 m2: pe 4/9 -> kappa 0.4.
    assert agreement.screenings == 3
    assert agreement.kappa == pytest.approx(0.4)


def test_human_rates_use_final_decisions_and_only_audited_passes() -> None:
    rows = [
        screening("f1", "flagged", "mismatch"),
        screening("f2", "flagged", "faithful"),
        screening("f3", "flagged", None),
        screening("p1", "passed", "mismatch", audit=True),
        screening("p2", "passed", "faithful", audit=True),
        screening("p3", "passed", "faithful", audit=True),
        screening("p4", "passed", "mismatch", audit=False),
        screening("n1", "needs_review", "mismatch"),
    ]
    human = summarize(rows, []).human
    assert human.flagged_precision == Rate.of(1, 2)
    assert human.false_pass == Rate.of(1, 3)


def test_outcomes_list_every_outcome_and_reasons_are_counted() -> None:
    rows = [
        ScreeningRow("a", "flagged", ["x", "y"], None, False),
        ScreeningRow("b", "flagged", ["x"], None, False),
    ]
    summary = summarize(rows, [])
    assert summary.outcomes == {"passed": 0, "flagged": 2, "needs_review": 0}
    assert summary.reasons == {"x": 2, "y": 1}


def test_rate_text_shows_percent_counts_and_interval() -> None:
    assert rate_text(Rate.of(3, 24)) == "12.5% (3/24, 95% CI 4.3-31.0%)"


def test_rate_text_of_a_small_cell_shows_only_counts() -> None:
    assert rate_text(Rate.of(3, 7)) == "n<10 (3/7)"
    assert rate_text(Rate.of(0, 0)) == "n<10 (0/0)"
    assert rate_text(Rate.of(5, 10)).startswith("50.0% (5/10, ")


def test_summary_text_shows_each_group_and_the_agreement() -> None:
    rows = [review("a", "translator"), review("a", "judge", verdict="mismatch")]
    text = summary_text(summarize([screening("a")], rows))
    assert "translator / m / prompt p: 1 screenings, 1 calls" in text
    assert "judge / m / prompt p: 1 screenings, 1 calls" in text
    # One pair, opposite labels: no agreement and no chance agreement -> kappa 0.
    assert "kappa 0.000 over 1 screenings" in text
    assert "kappa - over 0 screenings" in summary_text(summarize([], []))
