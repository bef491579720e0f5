"""The policy for a panel of judges (FAITHSCREEN_JUDGES): `policy-4`. Pure.

Judges of one model family share blind spots, so a panel asks several. The rules, on top of
the single judge's (`ruling.py`), each judge's reading ruled as the single judge's is:

1. Under both rules a pair passes only when the translator and every judge are read FAITHFUL
   from `ok` replies and no evidence objects (fail closed: no vote outweighs an unreadable
   or dissenting reply).
2. Each judge's reasons are the single judge's reasons qualified by its name
   (`judge_mismatch:a`, `judge_truncated:b`, `unconfirmed_judge_mismatch:c`), never bare.
3. `unanimous`: a standing MISMATCH from any judge flags the pair.
4. `majority`: standing MISMATCHes from more than half of the judges flag the pair; from
   fewer (or exactly half), each such judge's reason is `judge_minority_mismatch:<name>`
   and `panel_split` is added: the pair needs review (a person's look, not a flag).
5. Anything else not FAITHFUL needs review, as for one judge; the translator's standing
   MISMATCH flags under both rules (the rule is about the judges' votes).
6. A judge marked not evidential (FAITHSCREEN_JUDGE_<NAME>_EVIDENTIAL=false) is ruled as a
   single judge so marked: its FAITHFUL is `judge_non_evidential:<name>` and the pair needs
   review, however many evidential judges say FAITHFUL beside it (fail closed: every
   judge's FAITHFUL is required for a pass, so each must be evidential); its standing
   MISMATCH counts as a vote like any other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.evidence.finding import Finding
from app.policy.reasons import Reason, evidence_reasons, judge_reason
from app.policy.ruling import RoleResult, Ruling, outcome_of, role_reasons
from app.vocabulary import PanelRule, Role, Severity

# policy-4: rule 6 (policy-2 let a non-evidential judge's FAITHFUL count towards a pass).
PANEL_POLICY_VERSION = "policy-4"


@dataclass(frozen=True, slots=True)
class Panel:
    """The judges a screening is screened by, in order, and how their votes combine."""

    judges: tuple[str, ...]
    rule: PanelRule = PanelRule.UNANIMOUS


def panel_of(judges: Sequence[str] | None, rule: str | None) -> Panel | None:
    """The panel a screening recorded (its `judges` and `panel_rule` columns), None for a
    screening by the single judge."""
    if not judges:
        return None
    return Panel(tuple(judges), PanelRule(rule or PanelRule.UNANIMOUS.value))


def decide_panel(
    translator: RoleResult,
    judges: Mapping[str, RoleResult],
    panel: Panel,
    findings: Sequence[Finding],
    confirmations: int,
) -> Ruling:
    """Apply the rules in the module docstring. Raises ValueError when `judges` does not
    hold exactly the panel's judges (a pipeline fault), or as `decide` does."""
    if not panel.judges or set(judges) != set(panel.judges):
        raise ValueError(f"readings for judges {sorted(judges)}, but the panel is {panel.judges}")
    own = {name: role_reasons(Role.JUDGE, judges[name], confirmations) for name in panel.judges}
    standing = [name for name in panel.judges if own[name] == [Reason.JUDGE_MISMATCH.value]]
    minority = panel.rule is PanelRule.MAJORITY and 0 < 2 * len(standing) <= len(panel.judges)
    reasons = [
        *role_reasons(Role.TRANSLATOR, translator, confirmations),
        *([Reason.PANEL_SPLIT.value] if minority else []),
        *(
            judge_reason(_kind(reason, minority), name)
            for name in panel.judges
            for reason in own[name]
        ),
        *evidence_reasons(list(findings), Severity.FLAG),
        *evidence_reasons(list(findings), Severity.REVIEW),
    ]
    return Ruling(outcome_of(reasons), tuple(reasons), PANEL_POLICY_VERSION)


def _kind(reason: str, minority: bool) -> Reason:
    if minority and reason == Reason.JUDGE_MISMATCH.value:
        return Reason.JUDGE_MINORITY_MISMATCH
    return Reason(reason)
