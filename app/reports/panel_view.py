"""The judges sections of the terminal and HTML reports (panel.py has the numbers).

Shown only when a judge panel screened some of the reported screenings: with the single
judge, its numbers are the `judge` groups' already, and the report reads as before. The
HTML section is the template report_judges.html, which escapes and marks every text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


def judges_view(judges: Sequence[JudgeReport], agreement: PanelAgreement) -> dict[str, Any] | None:
    """The HTML report's judges section (templates/report_judges.html): its table's rows, a
    header first, Fleiss' kappa and each pair's Cohen's kappa; None without a panel."""
    if not has_panel(judges):
        return None
    return {
        "rows": judge_rows(judges),
        "fleiss": _kappa(agreement.fleiss_kappa),
        "n": agreement.n,
        "pairs": [(pair, _kappa(k)) for pair, k in agreement.pairs.items()],
    }


def _kappa(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
