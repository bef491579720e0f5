"""A batch's calibration, and optionally its comparison with another batch, as one
self-contained HTML page (pure: the calibration and comparison objects in, text out).

In the style of `report --html`, with its stylesheet, its Content-Security-Policy (no
script, nothing fetched) and its chart geometry. Every text from the data (batch ids, tags,
model names, versions, reason codes) is escaped, and none is ever cut short: text from
users sits in table cells that wrap, while the charts carry only labels of our own; a bidi
control in it is shown as its marker by `html_page` (app/page_text.py). Rates
read as in the report: a share with its counts and 95% Wilson interval, `n<10 (k/n)` where
a share would mislead, and `no cases (0/0)` where there is nothing to count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from app.calibration.tally import FAITHFUL, FLAGGED, MISMATCH, PASSED
from app.calibration.text import batch_label, non_evidential_lines
from app.reports.charts import (
    LABEL,
    ROW,
    TOP,
    interval_mark,
    note,
    rate_axis,
    stacked_chart,
    svg_chart,
)
from app.reports.html import OUTCOME_COLOURS, html_page
from app.reports.stats import TOO_FEW, Rate
from app.reports.text import milliseconds, rate_text
from app.vocabulary import LABELS, OUTCOMES, SINGLE_JUDGE, Outcome

# Each rate of the calibration object: its name on the page, and what it counts.
RATES = {
    "false_pass": ("false pass", "mismatch pairs that passed, over mismatch pairs"),
    "false_alarm": ("false alarm", "faithful pairs not passed, over faithful pairs"),
    "false_flag": ("false flag", "faithful pairs flagged, over faithful pairs"),
    "flag_precision": ("flag precision", "mismatch pairs among flagged ones"),
    "pass_precision": (
        "pass precision",
        "faithful pairs among passed ones: what keeping the passed pairs relies on",
    ),
    "automation": ("automation", "passed or flagged (no person needed), over labelled"),
}
# The compared rates, each over the common pairs with this label.
COMPARED = {"false_pass": MISMATCH, "false_alarm": FAITHFUL}
# The cells of the matrix that are errors: a mismatch passed, a faithful pair not passed.
ERRORS = {(MISMATCH, PASSED), (FAITHFUL, FLAGGED), (FAITHFUL, Outcome.NEEDS_REVIEW)}
NO_CASES = "no cases"
VERSIONS = ("prompt", "parser", "policy", "evidence")
# Text from users (tags, model names, batch ids) may be one long word: it wraps anywhere
# rather than push the page wider than a narrow window. Only there: a table column that
# may wrap anywhere is one the browser may squeeze, and headings and counts must not be.
PAGE_STYLE = """
h1, p, td.wrap { overflow-wrap: anywhere; }
th, td:not(.wrap) { overflow-wrap: normal; }
th.count, span.version { white-space: nowrap; }
.warning { background: #fdf1dc; border-left: 4px solid #d89a2b; padding: 8px 12px; }
td.count, th.count { text-align: right; font-variant-numeric: tabular-nums; }
td.error { color: #c2423a; font-weight: 600; }
svg.chart text.empty { fill: #5f6b76; font-style: italic; }
"""


def calibration_page(
    calibration: Mapping[str, Any],
    comparison: Mapping[str, Any] | None = None,
    *,
    title: str = "FaithScreen calibration",
    names: Mapping[str, str] | None = None,
) -> str:
    """The whole page: `calibration` as CalibrationOut, `comparison` as ComparisonOut
    (app/api/calibration_schemas.py), `names` batch id -> name for the named ones. A
    comparison comes first, right under the title: it is what the page was asked for,
    and B's calibration below it is its detail."""
    compared = [] if comparison is None else _comparison(comparison, calibration, names or {})
    body = [
        "<main>",
        f"<h1>{escape(title)}</h1>",
        *compared,
        *_header(calibration),
        *_matrix(calibration),
        *_rates(calibration["rates"]),
        *_slices(calibration),
        *_reasons(calibration["needs_review_reasons"]),
        *_configs(calibration["configs"]),
        *_cost(calibration["cost"]),
        *_judges(calibration.get("by_judge") or {}),
        "</main>",
    ]
    return html_page(title, body, extra_style=PAGE_STYLE)


def _header(calibration: Mapping[str, Any]) -> list[str]:
    labelled, pending = calibration["labelled"], calibration["pending"]
    parts = [
        f'<p class="meta">Batch {escape(calibration["batch_id"])}.</p>',
        f"<p>{labelled} labelled screenings done, each counted by its current outcome; "
        f"{calibration['unlabelled']} unlabelled (not counted); {pending} labelled and "
        "pending. Passing is evidence, never certification. A rate over fewer than "
        f"{TOO_FEW} cases shows only its counts.</p>",
        *(
            f'<p class="warning">{escape(line)}</p>'
            for line in non_evidential_lines(calibration.get("non_evidential") or {})
        ),
    ]
    if calibration["partial"]:
        parts.append(
            f'<p class="warning"><strong>Partial:</strong> {pending} labelled screenings '
            "are not done yet. Every count and rate below will change when they are.</p>"
        )
    return parts


def _matrix(calibration: Mapping[str, Any]) -> list[str]:
    matrix = calibration["matrix"]
    header = [_th("label"), *(_th(o, "count") for o in OUTCOMES), _th("total", "count")]
    rows = [_matrix_row(label, matrix[label]) for label in LABELS]
    totals = [sum(matrix[label][o] for label in LABELS) for o in OUTCOMES]
    rows.append([_th("total"), *(_count(t) for t in totals), _count(sum(totals))])
    drawn = [(label, matrix[label]) for label in LABELS if sum(matrix[label].values())]
    parts = [
        "<h2>Labels and outcomes</h2>",
        _table(header, rows),
        '<p class="hint">In red, the errors: a mismatch pair passed (false pass), a '
        "faithful pair flagged or left for review (false alarm).</p>",
    ]
    if not drawn:
        return [*parts, '<p class="hint">No labelled screening is done yet.</p>']
    # stacked_chart notes a row without cases as `no readings`: only rows with cases go in.
    return [*parts, stacked_chart("Outcomes by label", drawn, OUTCOMES, OUTCOME_COLOURS)]


def _matrix_row(label: str, counts: Mapping[str, int]) -> list[str]:
    cells = [_count(counts[o], "error" if (label, o) in ERRORS else "") for o in OUTCOMES]
    return [_th(label), *cells, _count(sum(counts[o] for o in OUTCOMES))]


def _rates(rates: Mapping[str, Any]) -> list[str]:
    shown = [(name, _rate(rates[key]), meaning) for key, (name, meaning) in RATES.items()]
    rows = [[name, _rate_text(rate), meaning] for name, rate, meaning in shown]
    return [
        "<h2>Rates</h2>",
        _rate_chart("Rates with 95% intervals", [(name, rate) for name, rate, _ in shown]),
        _text_table(["rate", "value", "what it counts"], rows),
    ]


def _slices(calibration: Mapping[str, Any]) -> list[str]:
    by_tag = calibration["by_tag"]
    tags = _slice_table("tag", by_tag) if by_tag else '<p class="hint">No tags.</p>'
    return [
        "<h2>Slices</h2>",
        '<p class="hint">A screening with several tags counts under each.</p>',
        "<h3>By tag</h3>",
        tags,
        "<h3>By kind of statement</h3>",
        _slice_table("kind", calibration["by_kind"]),
    ]


def _slice_table(what: str, slices: Mapping[str, Any]) -> str:
    rows = [
        [
            name,
            str(part["labelled"]),
            _rate_text(_rate(part["rates"]["false_pass"])),
            _rate_text(_rate(part["rates"]["false_alarm"])),
        ]
        for name, part in slices.items()
    ]
    return _text_table(
        [what, "labelled", "false pass", "false alarm"], rows, counts=(1,), wrap=(0,)
    )


def _reasons(reasons: Mapping[str, int]) -> list[str]:
    parts = ["<h2>Why labelled screenings need review</h2>"]
    if not reasons:
        return [*parts, '<p class="hint">No labelled screening needs review.</p>']
    rows = [[reason, str(count)] for reason, count in reasons.items()]
    return [*parts, _text_table(["reason", "screenings"], rows, counts=(1,), wrap=(0,))]


def _configs(configs: Sequence[Mapping[str, Any]]) -> list[str]:
    parts = ["<h2>Configurations</h2>"]
    if not configs:
        return [*parts, '<p class="hint">No labelled screening is done yet.</p>']
    header = [
        _th("screenings", "count"),
        _th("models"),
        _th("versions: prompts, parser, policy, evidence"),
        _th("confirmations", "count"),
    ]
    return [
        *parts,
        '<p class="hint">What decided the labelled screenings, most used first; '
        "<code>supplied</code> for replies the client supplied.</p>",
        _table(header, [_config_row(config) for config in configs]),
    ]


def _config_row(config: Mapping[str, Any]) -> list[str]:
    # Both models in one cell: the one column that wraps anywhere, so nothing else is
    # squeezed by a long model name.
    models = [f"{role}: {_or_dash(config[f'{role}_model'])}" for role in ("translator", "judge")]
    # A version is our own short code (`contract-1`): never broken at its hyphen.
    versions = ", ".join(
        f'<span class="version">{escape(_or_dash(config[f"{part}_version"]))}</span>'
        for part in VERSIONS
    )
    return [
        _count(config["count"]),
        f'<td class="wrap">{"<br>".join(escape(line) for line in models)}</td>',
        f"<td>{versions}</td>",
        _count(config["confirmations"]),
    ]


def _cost(cost: Mapping[str, Any]) -> list[str]:
    rows = [
        ["screenings", str(cost["screenings"])],
        ["calls per screening", _decimal(cost["calls_per_screening"], 2)],
        ["prompt tokens per screening", _decimal(cost["prompt_tokens_per_screening"], 0)],
        ["completion tokens per screening", _decimal(cost["completion_tokens_per_screening"], 0)],
        ["latency p50 ms", milliseconds(cost["latency_p50_ms"])],
        ["latency p95 ms", milliseconds(cost["latency_p95_ms"])],
    ]
    return [
        "<h2>Cost</h2>",
        '<p class="hint">Every stored call, retries included; latency only of calls a '
        "provider answered.</p>",
        _text_table([], rows, counts=(1,)),
    ]


JUDGE_COLUMNS = ["judge", "models", "pairs", "catches", "faithful", "unreadable",
                 "calls/pair", "tokens/pair"]  # fmt: skip


def _judges(by_judge: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A panel's judges, each by its own verdict (not shown for the single judge alone)."""
    if set(by_judge) <= {SINGLE_JUDGE}:
        return []
    rows = [
        [
            name,
            ", ".join(judge["models"]),
            str(judge["pairs"]),
            *(rate_text(_rate(judge[key])) for key in ("catches", "faithful", "unreadable")),
            _decimal(judge["calls_per_pair"], 2),
            _decimal(judge["tokens_per_pair"], 0),
        ]
        for name, judge in by_judge.items()
    ]
    return [
        "<h2>By judge</h2>",
        '<p class="hint">Each judge by its own verdict (its first readable reply): catches '
        "are MISMATCH on mismatch pairs, faithful is FAITHFUL on faithful pairs; 95% Wilson "
        "intervals. Which judge earns its cost.</p>",
        _text_table(JUDGE_COLUMNS, rows, counts=(2, 6, 7), wrap=(0, 1)),
    ]


def _comparison(
    comparison: Mapping[str, Any], calibration: Mapping[str, Any], names: Mapping[str, str]
) -> list[str]:
    rates = comparison["rates"]
    batch_id = calibration["batch_id"]
    a, b = (_batch_name(comparison[side], batch_id, names) for side in ("a", "b"))
    parts = [
        '<h2 id="comparison">Comparison of two batches</h2>',
        f"<p>A: {a}<br>B: {b}</p>",
        f"<p>{comparison['common']} pairs labelled alike and done in both batches; "
        f"{comparison['label_conflicts']} labelled differently in the two, left out.</p>",
    ]
    for key, label in COMPARED.items():
        name = RATES[key][0]
        pair = rates[key]
        chart_rows = [("A", _rate(pair["a"])), ("B", _rate(pair["b"]))]
        title = f"{name} over the common {label} pairs, 95% intervals"
        parts.append(_rate_chart(title[0].upper() + title[1:], chart_rows))
    header = ["rate", "A", "B", "B − A", "A only", "B only", "p-value"]
    rows = [_compared_row(RATES[key][0], rates[key]) for key in COMPARED]
    return [
        *parts,
        _text_table(header, rows, counts=(4, 5, 6)),
        '<p class="hint">A only, B only: pairs where the error happens under that batch '
        "alone. The p-value is the exact two-sided McNemar test on them: a small one says "
        "the difference is more than chance.</p>",
        f'<h2 id="calibration">Calibration of {_batch_name(batch_id, "", names)}</h2>',
    ]


def _batch_name(compared: str, batch_id: str, names: Mapping[str, str]) -> str:
    this = " (this page's batch)" if compared == batch_id else ""
    return escape(batch_label(compared, names.get(compared))) + this


def _compared_row(name: str, pair: Mapping[str, Any]) -> list[str]:
    discordant = pair["discordant"]
    return [
        name,
        _rate_text(_rate(pair["a"])),
        _rate_text(_rate(pair["b"])),
        _difference(pair),
        str(discordant["a_only"]),
        str(discordant["b_only"]),
        _p_value(pair["p_value"]),
    ]


def _difference(pair: Mapping[str, Any]) -> str:
    """In points where the pairs are enough for a share to say something, else in pairs."""
    n, change = pair["a"]["n"], pair["b"]["k"] - pair["a"]["k"]
    if pair["difference"] is None:
        return NO_CASES
    if n < TOO_FEW:
        return f"{change:+d} of {n} pairs"
    return f"{pair['difference'] * 100:+.1f} points ({change:+d} of {n} pairs)"


def _p_value(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _rate(data: Mapping[str, Any]) -> Rate:
    """A rate of the calibration object ({k, n, rate, low, high}) as the report's Rate."""
    n = data["n"]
    return Rate(data["k"], n, data["rate"], data["low"], data["high"], n < TOO_FEW)


def _rate_text(rate: Rate) -> str:
    return f"{NO_CASES} ({rate.counts})" if rate.denominator == 0 else rate_text(rate)


# The rate chart: charts.interval_chart's drawing, but a rate without cases says so where
# its dot would be (interval_chart notes it `n<10 (0/0)`).


def _rate_chart(title: str, rows: Sequence[tuple[str, Rate]]) -> str:
    """Each rate as a dot with its 95% interval on a 0-100% axis, its counts after it.
    `rows` are labels of our own, short enough for the label column."""
    bottom = TOP + len(rows) * ROW
    drawn = [_rate_row(label, rate, TOP + i * ROW) for i, (label, rate) in enumerate(rows)]
    return svg_chart(title, bottom + 8, [rate_axis(bottom), *drawn])


def _rate_row(label: str, rate: Rate, y: int) -> str:
    baseline = y + ROW / 2 + 2
    label_text = _text("label", LABEL - 8, baseline, label, ' text-anchor="end"')
    if rate.denominator == 0:
        return label_text + _text("empty", LABEL + 8, baseline, NO_CASES) + note("0/0", y)
    return label_text + interval_mark(rate, y) + note(rate_text(rate), y)


def _text(css: str, x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text class="{css}" x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>'


# Tables: every cell's text is escaped here, and nowhere else.


def _text_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    counts: Sequence[int] = (),
    wrap: Sequence[int] = (),
) -> str:
    """A table of plain texts, a header row when `columns` are given. The columns at the
    indexes in `counts` hold numbers, aligned right; those in `wrap` text from users."""
    header = [_th(c, "count" if i in counts else "") for i, c in enumerate(columns)]
    body = [[_cell(cell, i, counts, wrap) for i, cell in enumerate(row)] for row in rows]
    return _table(header, body)


def _cell(text: str, index: int, counts: Sequence[int], wrap: Sequence[int]) -> str:
    if index in counts:
        return _count(text)
    return _td(text, "wrap" if index in wrap else "")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table of cells already made (_th, _td, _count)."""
    head = f"<tr>{''.join(header)}</tr>" if header else ""
    body = "".join("<tr>" + "".join(row) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def _th(text: str, css: str = "") -> str:
    return f"<th{_class(css)}>{escape(text)}</th>"


def _td(text: str, css: str = "") -> str:
    return f"<td{_class(css)}>{escape(text)}</td>"


def _count(value: object, css: str = "") -> str:
    return f"<td{_class(' '.join(filter(None, ['count', css])))}>{escape(str(value))}</td>"


def _class(css: str) -> str:
    return f' class="{css}"' if css else ""


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)


def _decimal(value: float | None, places: int) -> str:
    return "-" if value is None else f"{value:.{places}f}"
