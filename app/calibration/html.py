"""A batch's calibration, and optionally its comparison with another batch, as one
self-contained HTML page (pure: the calibration and comparison objects in, text out).

The page is the template app/web/templates/report_calibration.html, on the report's own
page (its stylesheet, its Content-Security-Policy: no script, nothing fetched) with its
chart geometry. This module gathers each section's texts and charts; the template escapes
every text from the data (batch ids, tags, model names, versions, reason codes) and marks
any bidi control in it (app/reports/pages.py), and none is ever cut short: text from users
sits in table cells that wrap, while the charts carry only labels of our own. Rates read as
in the report: a share with its counts and 95% Wilson interval, `n<10 (k/n)` where a share
would mislead, and `no cases (0/0)` where there is nothing to count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from app.calibration.tally import FAITHFUL, FLAGGED, MISMATCH, PASSED
from app.calibration.text import batch_label, non_evidential_lines
from app.reports.charts import rate_chart, stacked_chart
from app.reports.html import OUTCOME_COLOURS
from app.reports.pages import render_report
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


JUDGE_COLUMNS = ["judge", "models", "pairs", "catches", "faithful", "unreadable",
                 "calls/pair", "tokens/pair"]  # fmt: skip


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
    compared = None if comparison is None else _comparison(comparison, calibration, names or {})
    return render_report(
        "report_calibration.html",
        title=title,
        comparison=compared,
        batch_id=calibration["batch_id"],
        labelled=calibration["labelled"],
        unlabelled=calibration["unlabelled"],
        pending=calibration["pending"],
        partial=calibration["partial"],
        too_few=TOO_FEW,
        non_evidential=non_evidential_lines(calibration.get("non_evidential") or {}),
        outcomes=OUTCOMES,
        matrix=_matrix(calibration["matrix"]),
        rates=_rates(calibration["rates"]),
        by_tag=_slice_rows(calibration["by_tag"]),
        by_kind=_slice_rows(calibration["by_kind"]),
        by_lean_status=_lean_rows(calibration.get("by_lean_status") or {}),
        reasons=[
            [reason, str(count)] for reason, count in calibration["needs_review_reasons"].items()
        ],
        configs=[_config(config) for config in calibration["configs"]],
        cost=_cost(calibration["cost"]),
        judge_columns=JUDGE_COLUMNS,
        judges=_judges(calibration.get("by_judge") or {}),
    )


def _matrix(matrix: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """Each label's counts by outcome, errors marked, then the totals; the chart only of
    labels with cases (stacked_chart notes a row without any as `no readings`)."""
    rows = [_matrix_row(label, matrix[label]) for label in LABELS]
    totals = [sum(matrix[label][o] for label in LABELS) for o in OUTCOMES]
    rows.append({"label": "total", "cells": [(t, False) for t in totals], "total": sum(totals)})
    drawn = [(label, matrix[label]) for label in LABELS if sum(matrix[label].values())]
    chart = stacked_chart("Outcomes by label", drawn, OUTCOMES, OUTCOME_COLOURS) if drawn else None
    return {"rows": rows, "chart": None if chart is None else Markup(chart)}


def _matrix_row(label: str, counts: Mapping[str, int]) -> dict[str, Any]:
    cells = [(counts[o], (label, o) in ERRORS) for o in OUTCOMES]
    return {"label": label, "cells": cells, "total": sum(counts[o] for o in OUTCOMES)}


def _rates(rates: Mapping[str, Any]) -> dict[str, Any]:
    shown = [(name, _rate(rates[key]), meaning) for key, (name, meaning) in RATES.items()]
    chart = _rate_chart("Rates with 95% intervals", [(name, rate) for name, rate, _ in shown])
    return {
        "chart": chart,
        "rows": [[name, _rate_text(rate), meaning] for name, rate, meaning in shown],
    }


def _slice_rows(slices: Mapping[str, Any]) -> list[list[str]]:
    return [
        [
            name,
            str(part["labelled"]),
            _rate_text(_rate(part["rates"]["false_pass"])),
            _rate_text(_rate(part["rates"]["false_alarm"])),
        ]
        for name, part in slices.items()
    ]


def _lean_rows(by_status: Mapping[str, Any]) -> list[list[str]]:
    """The slices by lean_status, when there are two statuses or more (one would only
    repeat the rates above)."""
    return _slice_rows(by_status) if len(by_status) > 1 else []


def _config(config: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "count": config["count"],
        "models": [
            f"{role}: {_or_dash(config[f'{role}_model'])}" for role in ("translator", "judge")
        ],
        "versions": [_or_dash(config[f"{part}_version"]) for part in VERSIONS],
        "confirmations": config["confirmations"],
    }


def _cost(cost: Mapping[str, Any]) -> list[list[str]]:
    return [
        ["screenings", str(cost["screenings"])],
        ["calls per screening", _decimal(cost["calls_per_screening"], 2)],
        ["prompt tokens per screening", _decimal(cost["prompt_tokens_per_screening"], 0)],
        ["completion tokens per screening", _decimal(cost["completion_tokens_per_screening"], 0)],
        ["latency p50 ms", milliseconds(cost["latency_p50_ms"])],
        ["latency p95 ms", milliseconds(cost["latency_p95_ms"])],
    ]


def _judges(by_judge: Mapping[str, Mapping[str, Any]]) -> list[list[str]] | None:
    """A panel's judges, each by its own verdict (None for the single judge alone)."""
    if set(by_judge) <= {SINGLE_JUDGE}:
        return None
    return [
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


def _comparison(
    comparison: Mapping[str, Any], calibration: Mapping[str, Any], names: Mapping[str, str]
) -> dict[str, Any]:
    rates = comparison["rates"]
    batch_id = calibration["batch_id"]
    charts = []
    for key, label in COMPARED.items():
        pair = rates[key]
        title = f"{RATES[key][0]} over the common {label} pairs, 95% intervals"
        rows = [("A", _rate(pair["a"])), ("B", _rate(pair["b"]))]
        charts.append(_rate_chart(title[0].upper() + title[1:], rows))
    return {
        "a": _batch(comparison["a"], batch_id, names),
        "b": _batch(comparison["b"], batch_id, names),
        "this": _batch(batch_id, "", names),
        "common": comparison["common"],
        "label_conflicts": comparison["label_conflicts"],
        "charts": charts,
        "rows": [_compared_row(RATES[key][0], rates[key]) for key in COMPARED],
    }


def _batch(compared: str, batch_id: str, names: Mapping[str, str]) -> dict[str, Any]:
    return {"label": batch_label(compared, names.get(compared)), "this": compared == batch_id}


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


def _rate_chart(title: str, rows: Sequence[tuple[str, Rate]]) -> Markup:
    return Markup(rate_chart(title, rows, NO_CASES))


def _or_dash(value: object) -> str:
    return "-" if value is None else str(value)


def _decimal(value: float | None, places: int) -> str:
    return "-" if value is None else f"{value:.{places}f}"
