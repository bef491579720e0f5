"""The ruling for one pair by its judges: the single judge (policy-3) or a panel (policy-4).
Pure.

A screening by the single judge is decided exactly as before a panel existed
(`ruling.decide_pair`), so stored screenings re-score to the same outcomes; a panel
screening (one that recorded its judges) by `policy.decide_panel`.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.evidence import run_checks
from app.pipeline.plan import PastCall
from app.pipeline.ruling import ScreeningRuling, decide_pair
from app.policy import Panel, RoleResult, decide_panel
from app.vocabulary import SINGLE_JUDGE, Pair


def judge_names(panel: Panel | None) -> tuple[str, ...]:
    """Whose calls a screening makes and replays: the panel's judges, or the single judge."""
    return panel.judges if panel is not None else (SINGLE_JUDGE,)


def decide_judged(
    pair: Pair,
    translator: RoleResult,
    judges: Mapping[str, RoleResult],
    panel: Panel | None,
    confirmations: int,
) -> ScreeningRuling:
    """`judges` by name: the panel's, or the single judge's under SINGLE_JUDGE."""
    if panel is None:
        return decide_pair(pair, translator, judges[SINGLE_JUDGE], confirmations)
    findings = tuple(run_checks(pair))
    ruling = decide_panel(translator, judges, panel, findings, confirmations)
    return ScreeningRuling(ruling, findings)


def decide_supplied_calls(
    pair: Pair,
    translator: list[PastCall],
    judges: Mapping[str, list[PastCall]],
    panel: Panel | None,
) -> ScreeningRuling:
    """Replies the client supplied, stored at intake and ruled later (after a Lean check):
    each role's one reading, no confirmations, exactly as intake rules them at once
    (app/intake/supplied.py)."""
    results = {name: RoleResult(judges[name][0].reading) for name in judge_names(panel)}
    return decide_judged(pair, RoleResult(translator[0].reading), results, panel, 0)
