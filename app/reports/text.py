"""The summary report as plain-text tables, for the terminal (pure: report in, text out)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from app.reports.lean import lean_text
from app.reports.panel_view import has_panel, judge_rows, panel_agreement_text
from app.reports.queue import Resolution, Resolutions
from app.reports.reviewers import DefectCounts, ReviewerAgreement
from app.reports.stats import TOO_FEW_LABEL, Rate
from app.reports.summary import Agreement, GroupReport, HumanRates, Summary
from app.repositories.report_rows import Backlog, DayCount, TagCounts
from app.vocabulary import OUTCOMES


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
    lines = [f"Screenings: {summary.screenings}"]
    lines += [f"Tokens per screening: {token_text(summary.tokens_per_screening)}", "", "Outcomes"]
    lines += _indented(table([[k, str(v)] for k, v in summary.outcomes.items()]))
    lines += ["", "Reasons"]
    reasons = [[k, str(v)] for k, v in summary.reasons.items()]
    lines += _indented(table(reasons)) if reasons else ["  (none)"]
    if summary.lean is not None:
        lines += ["", lean_text(summary.lean)]
    for group in summary.groups:
        lines += ["", *_group_lines(group)]
    lines += ["", *_agreement_lines(summary.agreement)]
    if has_panel(summary.judges):
        lines += ["", "Judges", *_indented(table(judge_rows(summary.judges)))]
        lines += ["", *panel_agreement_text(summary.panel_agreement)]
    lines += ["", "Against people's decisions"]
    lines += _indented(table(human_rows(summary.human)))
    lines += ["", "needs_review decided by people, by reason"]
    lines += _indented(table(resolution_rows(summary.resolutions)))
    lines += ["", f"Review queue: {backlog_text(summary.backlog)}"]
    lines += ["", *_people_lines(summary)]
    lines += ["", *_tag_lines(summary.tags), "", "Screenings per day (UTC)"]
    lines += _indented(table(day_rows(summary.days))) if summary.days else ["  (none)"]
    return "\n".join(lines) + "\n"


def _indented(lines: Iterable[str]) -> list[str]:
    return [f"  {line}" for line in lines]


def group_title(group: GroupReport) -> str:
    """The group's whole label: every rendering shows it uncut."""
    if group.supplied:
        return f"{group.role} / supplied"
    return f"{group.role} / {group.model or '-'} / prompt {group.prompt_version or '-'}"


def token_text(tokens: Mapping[str, float | int | None]) -> str:
    """`prompt 30.5, completion 12, reasoning 0`: whole counts as they are, means to 0.1."""
    return ", ".join(f"{k.removesuffix('_tokens')} {_number(v)}" for k, v in tokens.items())


def _number(value: float | int | None) -> str:
    if value is None:
        return "-"
    return str(value) if isinstance(value, int) else f"{value:.1f}"


def group_rows(group: GroupReport) -> list[list[str]]:
    """A group's statistics as (name, value) rows: the terminal and the HTML report share them."""
    readings = ", ".join(f"{k} {v}" for k, v in group.readings.items())
    p50, p95 = milliseconds(group.latency_p50_ms), milliseconds(group.latency_p95_ms)
    return [
        ["final readings", readings],
        ["format retry", rate_text(group.format_retry)],
        ["retry recovered", rate_text(group.retry_recovered)],
        ["truncation", rate_text(group.truncation)],
        ["tokens", token_text(group.tokens)],
        ["tokens per screening", token_text(group.tokens_per_screening)],
        ["latency ms", f"p50 {p50}, p95 {p95}"],
        ["timed calls", _timed_text(group)],
        *human_rows(group.human),
    ]


def _timed_text(group: GroupReport) -> str:
    if group.supplied:
        return "none (supplied replies are no calls)"
    unsent = f", {group.calls_not_sent} never sent" if group.calls_not_sent else ""
    return f"{group.timed_calls} of {group.calls}{unsent}"


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


DURATION_UNITS = (("d", 86400), ("h", 3600), ("min", 60), ("s", 1))
RESOLUTION_COLUMNS = ["reason", "screenings", "faithful", "mismatch", "undecided", "mismatch share"]


def resolution_rows(resolutions: Resolutions) -> list[list[str]]:
    """A header, the total, then one row per reason (a screening counts under each)."""
    rows = [_resolution_row("all needs_review", resolutions.total)]
    rows += [_resolution_row(r, res) for r, res in resolutions.by_reason.items()]
    return [RESOLUTION_COLUMNS, *rows]


def _resolution_row(label: str, resolution: Resolution) -> list[str]:
    counts = (resolution.screenings, resolution.faithful, resolution.mismatch)
    share = rate_text(resolution.mismatch_share)
    return [label, *(str(n) for n in counts), str(resolution.undecided), share]


def backlog_text(backlog: Backlog) -> str:
    """`3 waiting (2 open, 1 claimed); the oldest, item 7 (screening ...), since ... (2 d 3 h)`."""
    counts = f"{backlog.waiting} waiting ({backlog.open} open, {backlog.claimed} claimed)"
    if backlog.oldest is None:
        return counts
    oldest = backlog.oldest
    since = oldest.created_at.isoformat(timespec="seconds")
    age = backlog.oldest_age_seconds
    waited = f" ({duration_text(age)})" if age is not None else ""
    item = f"item {oldest.item_id} (screening {oldest.screening_id})"
    return f"{counts}; the oldest, {item}, waiting since {since}{waited}"


def duration_text(seconds: float) -> str:
    """The largest unit and the next, where not 0: `2 d 3 h`, `5 h`, `4 min 9 s`, `0 s`."""
    rest, amounts = int(seconds), []
    for unit, size in DURATION_UNITS:
        amounts.append((rest // size, unit))
        rest %= size
    first = next((i for i, (amount, _) in enumerate(amounts) if amount), len(amounts) - 1)
    largest, (amount, unit) = amounts[first], amounts[min(first + 1, len(amounts) - 1)]
    shown = [largest] + ([(amount, unit)] if amount and unit != largest[1] else [])
    return " ".join(f"{n} {u}" for n, u in shown)


def _tag_lines(tags: TagCounts) -> list[str]:
    if not tags.shown:
        return ["Outcomes by tag", "  (no tags)"]
    more = (
        f" (the {len(tags.shown)} with most screenings of {tags.total})" if tags.not_shown else ""
    )
    return [f"Outcomes by tag{more}", *_indented(table(tag_rows(tags)))]


def tag_rows(tags: TagCounts) -> list[list[str]]:
    rows = [
        [t.tag, str(t.screenings), *(str(t.outcomes.get(o, 0)) for o in OUTCOMES)]
        for t in tags.shown
    ]
    return [["tag", "screenings", *OUTCOMES], *rows]


def day_rows(days: Sequence[DayCount]) -> list[list[str]]:
    rows = [
        [d.day.isoformat(), str(d.screenings), *(str(d.outcomes.get(o, 0)) for o in OUTCOMES)]
        for d in days
    ]
    return [["day", "screenings", *OUTCOMES], *rows]


def milliseconds(value: float | None) -> str:
    """Whole milliseconds: exact below 10 s, and above it the quantiles are within 0.5%."""
    return "-" if value is None else f"{value:.0f}"


def agreement_text(agreement: ReviewerAgreement) -> str:
    """`3 of 4 double-reviewed items agreed (75.0%), kappa 0.500`; no share below 2 items."""
    counts = f"{agreement.agreed} of {agreement.double_reviewed} double-reviewed items agreed"
    if agreement.agreement is None:
        return f"{counts} (too few for a rate)"
    kappa = "-" if agreement.kappa is None else f"{agreement.kappa:.3f}"
    return f"{counts} ({percent(agreement.agreement)}), kappa {kappa}"


def defect_rows(defects: DefectCounts) -> list[list[str]]:
    """A header, the screenings decided mismatch, then one row per defect named, each by
    outcome; [] when nothing was decided mismatch."""
    if not defects.mismatches:
        return []
    named = sorted({d for counts in defects.by_outcome.values() for d in counts})
    rows = [["decided mismatch", *(str(defects.mismatches.get(o, 0)) for o in OUTCOMES)]]
    rows += [[d, *(str(defects.by_outcome.get(o, {}).get(d, 0)) for o in OUTCOMES)] for d in named]
    return [["defect", *OUTCOMES], *rows]


def conflicts_text(conflicts: int) -> str:
    pairs = "pair" if conflicts == 1 else "pairs"
    return f"{conflicts} {pairs} decided both faithful and mismatch over time"


def _people_lines(summary: Summary) -> list[str]:
    lines = ["People's decisions"]
    lines += _indented([f"Reviewer agreement: {agreement_text(summary.reviewer_agreement)}"])
    lines += _indented([f"Conflicts: {conflicts_text(summary.conflicts)}"])
    rows = defect_rows(summary.defects)
    lines += _indented(["Defects named on mismatches, by outcome"])
    return lines + (_indented(_indented(table(rows))) if rows else ["    (no mismatch decided)"])
