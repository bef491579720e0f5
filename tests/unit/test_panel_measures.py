"""What a panel's judges are worth, from stored rows alone: each judge's own verdicts in the
calibration (`by_judge`), and the report's per-judge breakdown and panel agreement."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from app.calibration.judges import own_verdict
from app.calibration.tally import CalibrationTally, Call, LabelledScreening
from app.reports.panel import fleiss_kappa
from app.reports.summary import summarize
from app.repositories.report_rows import ReviewRow, ScreeningRow


def call(judge: str, verdict: str, status: str = "ok", **extra: Any) -> Call:
    values: dict[str, Any] = {
        "role": "judge", "model": f"{judge}-model", "prompt_version": "p", "parser_version": "c",
        "supplied": False, "http_status": 200, "prompt_tokens": 100, "completion_tokens": 10,
        "latency_ms": 50, "judge_name": judge, "purpose": "review", "verdict": verdict,
        "parse_status": status,
    } | extra  # fmt: skip
    return Call(**values)


def labelled(label: str, calls: list[Call], outcome: str = "needs_review") -> LabelledScreening:
    return LabelledScreening(
        label=label, outcome=outcome, reasons=(), tags=(), kind="theorem", confirmations=0,
        policy_version="policy-2", evidence_version="e", calls=calls,
    )  # fmt: skip


def test_a_judges_own_verdict_is_its_first_ok_reply_not_a_confirmation() -> None:
    assert own_verdict([call("a", "unclear", "missing"), call("a", "mismatch")]) == "mismatch"
    confirmed = [call("a", "faithful"), call("a", "mismatch", purpose="confirmation")]
    assert own_verdict(confirmed) == "faithful"
    assert own_verdict([call("a", "unclear", "truncated")]) is None
    assert own_verdict([call("a", "mismatch", purpose="confirmation")]) is None


def test_by_judge_counts_catches_faithful_and_unreadable_per_judge() -> None:
    tally = CalibrationTally()
    tally.add(labelled("mismatch", [call("a", "mismatch"), call("b", "faithful")]))
    tally.add(labelled("mismatch", [call("a", "mismatch"), call("b", "unclear", "invalid"),
                                    call("b", "mismatch", purpose="format_retry")]))  # fmt: skip
    tally.add(labelled("faithful", [call("a", "mismatch"), call("b", "unclear", "empty")]))
    tally.add(labelled("faithful", [call("a", "faithful")], outcome=None))  # pending: not counted

    by_judge = tally.as_json()["by_judge"]
    a, b = by_judge["a"], by_judge["b"]
    assert (a["catches"]["k"], a["catches"]["n"]) == (2, 2)
    assert (a["faithful"]["k"], a["faithful"]["n"]) == (0, 1)
    assert (a["unreadable"]["k"], a["unreadable"]["n"]) == (0, 3)
    assert (b["catches"]["k"], b["catches"]["n"]) == (1, 2)
    assert (b["unreadable"]["k"], b["unreadable"]["n"]) == (1, 3)
    assert b["calls_per_pair"] == pytest.approx(4 / 3)
    assert b["tokens_per_pair"] == pytest.approx(4 * 110 / 3)
    assert a["models"] == ["a-model"]


def test_the_single_judge_is_by_judge_under_its_name() -> None:
    tally = CalibrationTally()
    tally.add(labelled("mismatch", [call("judge", "mismatch")]))
    assert list(tally.as_json()["by_judge"]) == ["judge"]


def test_fleiss_kappa() -> None:
    agree = [Counter(f=3), Counter(m=3)]
    assert fleiss_kappa(agree) == pytest.approx(1.0)
    split = [Counter(f=2, m=1), Counter(f=1, m=2)]
    assert fleiss_kappa(split) == pytest.approx(-1 / 3)
    assert fleiss_kappa([Counter(f=3), Counter(f=3)]) is None  # chance agreement is certain
    assert fleiss_kappa([]) is None
    assert fleiss_kappa([Counter(f=1)]) is None  # one rater agrees with no one


def review(sid: str, role: str, judge: str, verdict: str, status: str = "ok") -> ReviewRow:
    return ReviewRow(
        sid, role, 1, "review", f"{judge or role}-model", "p", verdict, status, 100, {},
        http_status=200, judge_name=judge,
    )  # fmt: skip


def test_the_report_breaks_down_per_judge_and_measures_panel_agreement() -> None:
    rows = []
    verdicts = {  # screening -> translator, a, b, c
        "s1": ("faithful", "faithful", "faithful", "faithful"),
        "s2": ("mismatch", "mismatch", "mismatch", "faithful"),
        "s3": ("faithful", "faithful", "mismatch", "faithful"),
    }
    for sid, (t, a, b, c) in verdicts.items():
        rows.append(review(sid, "translator", "", t))
        rows += [review(sid, "judge", name, v) for name, v in zip("abc", (a, b, c), strict=True)]
    rows.append(review("s4", "translator", "", "faithful"))
    rows.append(review("s4", "judge", "a", "faithful"))
    rows.append(review("s4", "judge", "b", "unclear", "truncated"))
    screenings = [ScreeningRow(sid, "passed", [], None, False) for sid in ("s1", "s2", "s3", "s4")]

    summary = summarize(screenings, rows)

    judges = {j.judge: j for j in summary.judges}
    assert sorted(judges) == ["a", "b", "c"]
    assert (judges["b"].screenings, judges["b"].calls) == (4, 4)
    assert judges["b"].readings["truncated"] == 1
    assert judges["a"].latency_p50_ms == 100
    # s4 has a truncated reply: left out of Fleiss' kappa; a/b and a/c keep what both read.
    agreement = summary.panel_agreement
    assert agreement.n == 3
    subjects = [Counter(f=4), Counter(m=3, f=1), Counter(f=3, m=1)]
    assert agreement.fleiss_kappa == pytest.approx(fleiss_kappa(subjects))
    assert set(agreement.pairs) == {"a/b", "a/c", "b/c"}
    assert agreement.pairs["a/c"] == pytest.approx(0.0)  # c never said mismatch
    # Each judge on its own model is a group of its own, each screening once per judge.
    groups = {(g.role, g.model): g for g in summary.groups}
    assert groups[("judge", "b-model")].screenings == 4


def test_a_single_judge_report_has_no_panel_agreement() -> None:
    rows = [review("s1", "translator", "", "faithful"), review("s1", "judge", "judge", "faithful")]
    summary = summarize([ScreeningRow("s1", "passed", [], None, False)], rows)
    assert [j.judge for j in summary.judges] == ["judge"]
    assert (summary.panel_agreement.n, summary.panel_agreement.pairs) == (0, {})
    assert summary.agreement.screenings == 1


def test_the_terminal_and_html_reports_show_judges_only_with_a_panel() -> None:
    from datetime import UTC, datetime

    from app.reports.html import summary_html
    from app.reports.text import summary_text

    single = [review("s1", "translator", "", "faithful"), review("s1", "judge", "judge", "ok")]
    panel = [review("s1", "translator", "", "faithful"), review("s1", "judge", "a<b", "faithful"),
             review("s1", "judge", "b", "mismatch")]  # fmt: skip
    screenings = [ScreeningRow("s1", "passed", [], None, False)]
    now = datetime.now(UTC)
    plain = summarize(screenings, single)
    assert "Judges" not in summary_text(plain)
    assert "<h2>Judges</h2>" not in summary_html(plain, filters={}, generated_at=now)
    shown = summarize(screenings, panel)
    text = summary_text(shown)
    assert "Judges" in text and "Panel agreement: Fleiss' kappa" in text
    page = summary_html(shown, filters={}, generated_at=now)
    assert "<h2>Judges</h2>" in page and "a&lt;b" in page and "a<b" not in page


def test_eval_run_prints_each_panel_judge_and_not_the_single_judge() -> None:
    from app.calibration.text import calibration_text

    panel = CalibrationTally()
    panel.add(labelled("mismatch", [call("a", "mismatch"), call("b", "faithful")]))
    text = calibration_text({"batch_id": "x", **panel.as_json()})
    assert "by judge (its own verdict" in text
    assert "  a (a-model): 1 pairs, 1.00 calls and 110 tokens a pair" in text
    assert "catches     1/1 = 100.0%" in text
    single = CalibrationTally()
    single.add(labelled("mismatch", [call("judge", "mismatch")]))
    assert "by judge" not in calibration_text({"batch_id": "x", **single.as_json()})


def test_the_calibration_page_shows_each_panel_judge() -> None:
    from app.calibration.html import calibration_page

    panel = CalibrationTally()
    panel.add(labelled("mismatch", [call("a<x", "mismatch"), call("b", "faithful")]))
    page = calibration_page({"batch_id": "x", **panel.as_json()})
    assert "<h2>By judge</h2>" in page and "a&lt;x" in page and "a<x" not in page
    single = CalibrationTally()
    single.add(labelled("mismatch", [call("judge", "mismatch")]))
    assert "By judge" not in calibration_page({"batch_id": "x", **single.as_json()})
