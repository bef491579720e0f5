"""The summary report as one self-contained HTML page (pure: report in, text out).

The page is the template app/web/templates/report_summary.html on report_page.html:
inline CSS and inline SVG charts (charts.py); no script and no external resource, and a
Content-Security-Policy that forbids both, so the file reads the same offline, from a mail
attachment or an artefact store. This module only gathers each section's texts and charts;
the template escapes every text from the data (model names, prompt versions, reasons,
filters), and a bidi control in it is shown as its marker (app/reports/pages.py,
app/page_text.py). Rates read as in the terminal (text.rate_text): a share with
its counts and 95% Wilson interval, or `n<10 (k/n)` where a share would mislead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from markupsafe import Markup

from app.reports.charts import (
    bar_chart,
    day_chart,
    interval_chart,
    latency_chart,
    stacked_chart,
)
from app.reports.pages import render_report
from app.reports.panel_view import judges_view
from app.reports.queue import Resolutions
from app.reports.stats import TOO_FEW
from app.reports.summary import READINGS, GroupReport, HumanRates, Summary
from app.reports.text import (
    agreement_text,
    backlog_text,
    conflicts_text,
    day_rows,
    defect_rows,
    group_rows,
    group_title,
    human_rows,
    resolution_rows,
    tag_rows,
    token_text,
)
from app.repositories.report_rows import DayCount, TagCounts
from app.vocabulary import OUTCOMES

OUTCOME_COLOURS = {"passed": "#3a8f5c", "flagged": "#c2423a", "needs_review": "#d89a2b"}
DECISION_COLOURS = {"faithful": "#3a8f5c", "mismatch": "#c2423a", "undecided": "#9aa3ab"}
READING_COLOURS = {
    "ok": "#3a8f5c",
    "model_unclear": "#d89a2b",
    "unreadable": "#c2423a",
    "truncated": "#8e5fb5",
    "empty": "#9aa3ab",
    "provider_error": "#6b2e2a",
    "refused": "#4c6fa8",
}


def summary_html(summary: Summary, *, filters: Mapping[str, str], generated_at: datetime) -> str:
    """The whole page; `filters` are the ones the report was read with, label -> value."""
    return render_report(
        "report_summary.html",
        title="FaithScreen report",
        summary=summary,
        filters=filters,
        generated=generated_at.isoformat(timespec="seconds"),
        too_few=TOO_FEW,
        tokens=token_text(summary.tokens_per_screening),
        kappa="-" if summary.agreement.kappa is None else f"{summary.agreement.kappa:.3f}",
        judges=judges_view(summary.judges, summary.panel_agreement),
        backlog=backlog_text(summary.backlog),
        reviewer_agreement=agreement_text(summary.reviewer_agreement),
        conflicts=conflicts_text(summary.conflicts),
        **_outcomes(summary),
        groups=_groups(summary.groups),
        human=_human(summary.human),
        resolutions=_resolutions(summary.resolutions),
        defects=_rows(defect_rows(summary.defects)),
        tags=_tags(summary.tags),
        days=_days(summary.days),
    )


# Each section's context: rows of plain text (escaped by the template) and charts, which
# are SVG markup from charts.py. None where the section says it has nothing to show.


def _outcomes(summary: Summary) -> dict[str, Any]:
    outcomes = list(summary.outcomes.items())
    reasons = list(summary.reasons.items())
    shown = {
        "chart": Markup(bar_chart("Outcomes", outcomes, OUTCOME_COLOURS)),
        "rows": [[k, str(v)] for k, v in outcomes],
    }
    if not reasons:
        return {"outcomes": shown, "reasons": None}
    chart = Markup(bar_chart("Reasons", reasons, {}))
    return {
        "outcomes": shown,
        "reasons": {"chart": chart, "rows": [[k, str(v)] for k, v in reasons]},
    }


def _groups(groups: Sequence[GroupReport]) -> dict[str, Any] | None:
    if not groups:
        return None
    readings = [(group_title(g), g.readings) for g in groups]
    latency = [(group_title(g), g.latency_p50_ms, g.latency_p95_ms) for g in groups]
    return {
        "readings": Markup(stacked_chart("Final readings", readings, READINGS, READING_COLOURS)),
        "latency": Markup(latency_chart("Latency p50 (dark) and p95 (light), ms", latency)),
        "each": [_group(group) for group in groups],
    }


def _group(group: GroupReport) -> dict[str, Any]:
    rates = [
        ("format retry", group.format_retry),
        ("retry recovered", group.retry_recovered),
        ("truncation", group.truncation),
        ("flagged precision", group.human.flagged_precision),
        ("false pass", group.human.false_pass),
    ]
    counts = [["screenings", str(group.screenings)], ["calls", str(group.calls)]]
    return {
        "title": group_title(group),
        "chart": Markup(interval_chart("Rates with 95% intervals", rates)),
        "rows": [*counts, *group_rows(group)],
    }


def _human(human: HumanRates) -> dict[str, Any]:
    rates = [("flagged precision", human.flagged_precision), ("false pass", human.false_pass)]
    chart = interval_chart("Rates against people's decisions, 95% intervals", rates)
    return {"chart": Markup(chart), "rows": human_rows(human)}


def _resolutions(resolutions: Resolutions) -> dict[str, Any] | None:
    if not resolutions.total.screenings:
        return None
    rows = [("all needs_review", resolutions.total), *resolutions.by_reason.items()]
    counts = [(label, _decided(r.faithful, r.mismatch, r.undecided)) for label, r in rows]
    chart = stacked_chart("Decisions", counts, list(DECISION_COLOURS), DECISION_COLOURS)
    return {"chart": Markup(chart), **(_rows(resolution_rows(resolutions)) or {})}


def _decided(faithful: int, mismatch: int, undecided: int) -> dict[str, int]:
    return {"faithful": faithful, "mismatch": mismatch, "undecided": undecided}


def _rows(rows: Sequence[Sequence[str]]) -> dict[str, Any] | None:
    """A header row and the rows under it; None for no rows at all."""
    if not rows:
        return None
    header, *body = rows
    return {"header": header, "rows": body}


def _tags(tags: TagCounts) -> dict[str, Any] | None:
    if not tags.shown:
        return None
    rows = [(t.tag, t.outcomes) for t in tags.shown]
    chart = stacked_chart("Outcomes by tag", rows, OUTCOMES, OUTCOME_COLOURS)
    shown = {"not_shown": tags.not_shown, "shown": len(tags.shown), "total": tags.total}
    return {"chart": Markup(chart), **shown, **(_rows(tag_rows(tags)) or {})}


def _days(days: list[DayCount]) -> dict[str, Any] | None:
    if not days:
        return None
    columns = [(d.day, d.outcomes) for d in days]
    chart = day_chart("Screenings per day, by outcome", columns, OUTCOMES, OUTCOME_COLOURS)
    return {"chart": Markup(chart), **(_rows(day_rows(days)) or {})}
