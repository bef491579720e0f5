"""The judges sections of the terminal and HTML reports (panel.py has the numbers).

Shown only when a judge panel screened some of the reported screenings: with the single
judge, its numbers are the `judge` groups' already, and the report reads as before. The
HTML parts are escaped here; `html_page` marks any bidi control in a judge's name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape

from app.reports.panel import JudgeReport, PanelAgreement
from app.vocabulary import SINGLE_JUDGE

COLUMNS = ["judge", "models", "screenings", "calls", "final readings", "tokens/screening",
           "p50 ms", "p95 ms"]  # fmt: skip


def has_panel(judges: Sequence[JudgeReport]) -> bool:
    return any(judge.judge != SINGLE_JUDGE for judge in judges)


def judge_rows(judges: Sequence[JudgeReport]) -> list[list[str]]:
    """A header, then one row per judge."""
    rows = [COLUMNS]
    for judge in judges:
        readings = ", ".join(f"{k} {v}" for k, v in judge.readings.items() if v)
        per = sum(v for v in judge.tokens_per_screening.values() if v is not None)
        rows.append(
            [
                judge.judge,
                ", ".join(judge.models),
                str(judge.screenings),
                str(judge.calls),
                readings or "-",
                f"{per:.1f}" if judge.screenings else "-",
                _ms(judge.latency_p50_ms),
                _ms(judge.latency_p95_ms),
            ]
        )
    return rows


def panel_agreement_text(agreement: PanelAgreement) -> list[str]:
    fleiss = _kappa(agreement.fleiss_kappa)
    lines = [f"Panel agreement: Fleiss' kappa {fleiss} over {agreement.n} screenings"]
    lines += [f"  {pair}: Cohen's kappa {_kappa(k)}" for pair, k in agreement.pairs.items()]
    return lines


Table = Callable[[Sequence[str], Sequence[Sequence[str]]], str]


def judges_html(
    judges: Sequence[JudgeReport], agreement: PanelAgreement, table: Table
) -> list[str]:
    """`table`: html.py's `_table(columns, rows)` (passed in: html.py imports this)."""
    if not has_panel(judges):
        return []
    rows = judge_rows(judges)
    pairs = "".join(
        f"<li>{escape(pair)}: Cohen's kappa {_kappa(k)}</li>" for pair, k in agreement.pairs.items()
    )
    return [
        "<h2>Judges</h2>",
        table(rows[0], rows[1:]),
        f"<p>Fleiss' kappa <strong>{_kappa(agreement.fleiss_kappa)}</strong> over "
        f"{agreement.n} panel screenings where the translator and every judge read ok.</p>",
        f"<ul>{pairs}</ul>" if pairs else "",
    ]


def _kappa(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
