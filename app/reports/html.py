"""The summary report as one self-contained HTML page (pure: report in, text out).

Inline CSS and inline SVG charts (charts.py); no script and no external resource, and a
Content-Security-Policy that forbids both, so the file reads the same offline, from a mail
attachment or an artefact store. Every text from the data (model names, prompt versions,
reasons, filters) is escaped, and a bidi control in it is shown as its marker
(app/page_text.py). Rates read as in the terminal (text.rate_text): a share with
its counts and 95% Wilson interval, or `n<10 (k/n)` where a share would mislead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from html import escape

from app.page_text import unhidden
from app.reports.charts import (
    bar_chart,
    day_chart,
    interval_chart,
    latency_chart,
    stacked_chart,
)
from app.reports.panel_view import judges_html
from app.reports.queue import Resolutions
from app.reports.stats import TOO_FEW
from app.reports.summary import READINGS, Agreement, GroupReport, HumanRates, Summary
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
from app.repositories.report_rows import Backlog, DayCount, TagCounts
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
STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1d252c; margin: 0; background: #f6f7f8; }
main { max-width: 960px; margin: 0 auto; padding: 24px; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.25em; margin: 32px 0 8px; border-bottom: 1px solid #d5dadf; }
h3 { font-size: 1.05em; margin: 20px 0 6px; }
h3, td, p { overflow-wrap: anywhere; }
.meta, .hint { color: #5f6b76; }
table { border-collapse: collapse; margin: 8px 0 16px; }
th, td { text-align: left; padding: 3px 12px 3px 0; border-bottom: 1px solid #eceff1;
  vertical-align: top; }
th { font-weight: 600; }
svg.chart { display: block; max-width: 100%; height: auto; margin: 8px 0 20px; }
svg.chart text { font: 12px system-ui, sans-serif; fill: #1d252c; }
svg.chart text.heading { font-weight: 600; font-size: 13px; }
svg.chart text.note, svg.chart text.tick { fill: #5f6b76; }
svg.chart line { stroke: #1d252c; stroke-width: 1.5; }
svg.chart line.grid { stroke: #dde2e6; stroke-width: 1; }
svg.chart circle { fill: #2b6ca3; }
"""
# No script, no fetch, no font or image from anywhere: only the inline style may apply.
CSP = "default-src 'none'; style-src 'unsafe-inline'"


def summary_html(summary: Summary, *, filters: Mapping[str, str], generated_at: datetime) -> str:
    """The whole page; `filters` are the ones the report was read with, label -> value."""
    body = [
        "<main>",
        *_header(summary, filters, generated_at),
        *_outcomes(summary),
        *_groups(summary.groups),
        *_agreement(summary.agreement),
        *judges_html(summary.judges, summary.panel_agreement, _table),
        *_human(summary.human),
        *_resolutions(summary.resolutions),
        *_backlog(summary.backlog),
        *_people(summary),
        *_tags(summary.tags),
        *_days(summary.days),
        "</main>",
    ]
    return html_page("FaithScreen report", body)


def html_page(title: str, body: Sequence[str], *, extra_style: str = "") -> str:
    """A self-contained page: the report's stylesheet (plus `extra_style`) and its CSP."""
    head = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        f"<title>{escape(title)}</title><style>{STYLE}{extra_style}</style></head><body>",
    ]
    # Model names, filters and tags come from outside: no bidi control in them reaches the
    # page as itself, in a cell, a chart's label or a title alike (app/page_text.py).
    return unhidden("\n".join([*head, *body, "</body></html>"]) + "\n")


def _header(summary: Summary, filters: Mapping[str, str], generated_at: datetime) -> list[str]:
    chosen = ", ".join(f"{escape(k)} {escape(v)}" for k, v in filters.items())
    return [
        "<h1>FaithScreen report</h1>",
        f'<p class="meta">Generated {escape(generated_at.isoformat(timespec="seconds"))}. '
        f"Filters: {chosen or 'none (everything stored)'}.</p>",
        f"<p>{summary.screenings} finished screenings. Passing is evidence, never "
        f"certification. A rate over fewer than {TOO_FEW} cases shows only its counts.</p>",
        f"<p>Tokens per screening: {escape(token_text(summary.tokens_per_screening))}.</p>",
    ]


def _outcomes(summary: Summary) -> list[str]:
    outcomes = list(summary.outcomes.items())
    reasons = list(summary.reasons.items())
    parts = ["<h2>Outcomes and reasons</h2>", bar_chart("Outcomes", outcomes, OUTCOME_COLOURS)]
    parts.append(_table(["outcome", "screenings"], [[k, str(v)] for k, v in outcomes]))
    if not reasons:
        return [*parts, '<p class="hint">No reasons recorded.</p>']
    parts.append(bar_chart("Reasons", reasons, {}))
    return [*parts, _table(["reason", "screenings"], [[k, str(v)] for k, v in reasons])]


def _groups(groups: Sequence[GroupReport]) -> list[str]:
    parts = ["<h2>Calls per role × model × prompt version</h2>"]
    if not groups:
        return [*parts, '<p class="hint">No calls recorded.</p>']
    readings = [(group_title(g), g.readings) for g in groups]
    latency = [(group_title(g), g.latency_p50_ms, g.latency_p95_ms) for g in groups]
    return [
        *parts,
        stacked_chart("Final readings", readings, READINGS, READING_COLOURS),
        latency_chart("Latency p50 (dark) and p95 (light), ms", latency),
        *(line for group in groups for line in _group(group)),
    ]


def _group(group: GroupReport) -> list[str]:
    rates = [
        ("format retry", group.format_retry),
        ("retry recovered", group.retry_recovered),
        ("truncation", group.truncation),
        ("flagged precision", group.human.flagged_precision),
        ("false pass", group.human.false_pass),
    ]
    counts = [["screenings", str(group.screenings)], ["calls", str(group.calls)]]
    return [
        f"<h3>{escape(group_title(group))}</h3>",
        interval_chart("Rates with 95% intervals", rates),
        _table([], [*counts, *group_rows(group)]),
    ]


def _agreement(agreement: Agreement) -> list[str]:
    kappa = "-" if agreement.kappa is None else f"{agreement.kappa:.3f}"
    return [
        "<h2>Translator and judge agreement</h2>",
        f"<p>Cohen's kappa <strong>{kappa}</strong> over {agreement.screenings} screenings "
        "where both final readings were read (status ok).</p>",
    ]


def _human(human: HumanRates) -> list[str]:
    rates = [("flagged precision", human.flagged_precision), ("false pass", human.false_pass)]
    return [
        "<h2>Against people's decisions</h2>",
        '<p class="hint">Flagged precision: flagged screenings a person judged mismatch. '
        "False pass: audited passed screenings a person judged mismatch.</p>",
        interval_chart("Rates against people's decisions, 95% intervals", rates),
        _table(["rate", "value"], human_rows(human)),
    ]


def _resolutions(resolutions: Resolutions) -> list[str]:
    parts = [
        "<h2>needs_review decided by people, by reason</h2>",
        '<p class="hint">Each screening counts under every reason it has; the mismatch '
        "share is over the decided ones. Undecided: not decided yet, or reopened.</p>",
    ]
    if not resolutions.total.screenings:
        return [*parts, '<p class="hint">No needs_review screenings.</p>']
    rows = [("all needs_review", resolutions.total), *resolutions.by_reason.items()]
    counts = [(label, _decided(r.faithful, r.mismatch, r.undecided)) for label, r in rows]
    chart = stacked_chart("Decisions", counts, list(DECISION_COLOURS), DECISION_COLOURS)
    header, *body = resolution_rows(resolutions)
    return [*parts, chart, _table(header, body)]


def _decided(faithful: int, mismatch: int, undecided: int) -> dict[str, int]:
    return {"faithful": faithful, "mismatch": mismatch, "undecided": undecided}


def _backlog(backlog: Backlog) -> list[str]:
    return ["<h2>Review queue</h2>", f"<p>{escape(backlog_text(backlog))}.</p>"]


def _people(summary: Summary) -> list[str]:
    parts = [
        "<h2>People's decisions</h2>",
        f"<p>Reviewer agreement: {escape(agreement_text(summary.reviewer_agreement))}.</p>",
        f"<p>Conflicts: {escape(conflicts_text(summary.conflicts))}.</p>",
        "<h3>Defects named on mismatches, by outcome</h3>",
        '<p class="hint">Which kinds of mismatch people found; under passed, the ones the '
        "screen let through. A screening with two defects counts under both.</p>",
    ]
    rows = defect_rows(summary.defects)
    if not rows:
        return [*parts, '<p class="hint">No mismatch decided.</p>']
    header, *body = rows
    return [*parts, _table(header, body)]


def _tags(tags: TagCounts) -> list[str]:
    parts = ["<h2>Outcomes by tag</h2>"]
    if not tags.shown:
        return [*parts, '<p class="hint">No tags on these screenings.</p>']
    if tags.not_shown:
        parts.append(
            f'<p class="hint">The {len(tags.shown)} tags with most screenings, of {tags.total}.</p>'
        )
    rows = [(t.tag, t.outcomes) for t in tags.shown]
    header, *body = tag_rows(tags)
    chart = stacked_chart("Outcomes by tag", rows, OUTCOMES, OUTCOME_COLOURS)
    return [*parts, chart, _table(header, body)]


def _days(days: list[DayCount]) -> list[str]:
    parts = ["<h2>Screenings per day (UTC)</h2>"]
    if not days:
        return [*parts, '<p class="hint">No screenings.</p>']
    columns = [(d.day, d.outcomes) for d in days]
    header, *body = day_rows(days)
    chart = day_chart("Screenings per day, by outcome", columns, OUTCOMES, OUTCOME_COLOURS)
    return [*parts, chart, _table(header, body)]


def _table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table with a header row when `columns` are given."""
    cells = "".join(f"<th>{escape(c)}</th>" for c in columns)
    header = f"<tr>{cells}</tr>" if columns else ""
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows
    )
    return f"<table>{header}{body}</table>"
