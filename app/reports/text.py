"""The summary report as plain-text tables, for the terminal (pure: report in, text out)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.reports.stats import TOO_FEW_LABEL, Rate
from app.reports.summary import Agreement, GroupReport, HumanRates, Summary


def rate_text(rate: Rate) -> str:
    """`12.5% (3/24, 95% CI 4.3-31.0%)`, or `n<10 (3/7)` where a share would mislead."""
    share = rate.shown()
    if share is None:
        return f"{TOO_FEW_LABEL} ({rate.counts})"
    interval = f"95% CI {share.low * 100:.1f}-{share.high * 100:.1f}%"
    return f"{percent(share.value)} ({rate.counts}, {interval})"


def percent(share: float) -> str:
    return f"{share * 100:.1f}%"


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Rows as left-aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    return [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def summary_text(summary: Summary) -> str:
    lines = [f"Screenings: {summary.screenings}", "", "Outcomes"]
    lines += _indented(table([[k, str(v)] for k, v in summary.outcomes.items()]))
    lines += ["", "Reasons"]
    reasons = [[k, str(v)] for k, v in summary.reasons.items()]
    lines += _indented(table(reasons)) if reasons else ["  (none)"]
    for group in summary.groups:
        lines += ["", *_group_lines(group)]
    lines += ["", *_agreement_lines(summary.agreement), "", "Against people's decisions"]
    lines += _indented(table(human_rows(summary.human)))
    return "\n".join(lines) + "\n"


def _indented(lines: Iterable[str]) -> list[str]:
    return [f"  {line}" for line in lines]


def group_title(group: GroupReport) -> str:
    return f"{group.role} / {group.model or '-'} / prompt {group.prompt_version or '-'}"


def group_rows(group: GroupReport) -> list[list[str]]:
    """A group's statistics as (name, value) rows: the terminal and the HTML report share them."""
    readings = ", ".join(f"{k} {v}" for k, v in group.readings.items())
    tokens = ", ".join(f"{k.removesuffix('_tokens')} {v}" for k, v in group.tokens.items())
    p50, p95 = milliseconds(group.latency_p50_ms), milliseconds(group.latency_p95_ms)
    return [
        ["final readings", readings],
        ["format retry", rate_text(group.format_retry)],
        ["retry recovered", rate_text(group.retry_recovered)],
        ["truncation", rate_text(group.truncation)],
        ["tokens", tokens],
        ["latency ms", f"p50 {p50}, p95 {p95}"],
        *human_rows(group.human),
    ]


def _group_lines(group: GroupReport) -> list[str]:
    title = f"{group_title(group)}: {group.screenings} screenings, {group.calls} calls"
    return [title, *_indented(table(group_rows(group)))]


def human_rows(human: HumanRates) -> list[list[str]]:
    return [
        ["flagged precision", rate_text(human.flagged_precision)],
        ["false pass", rate_text(human.false_pass)],
    ]


def _agreement_lines(agreement: Agreement) -> list[str]:
    kappa = "-" if agreement.kappa is None else f"{agreement.kappa:.3f}"
    return [f"Translator/judge agreement: kappa {kappa} over {agreement.screenings} screenings"]


def milliseconds(value: float | None) -> str:
    """Whole milliseconds: exact below 10 s, and above it the quantiles are within 0.5%."""
    return "-" if value is None else f"{value:.0f}"
