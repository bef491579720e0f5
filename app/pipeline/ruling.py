"""The ruling for one pair: evidence checks plus the policy. Pure."""

from __future__ import annotations

from dataclasses import dataclass

from app.evidence import EVIDENCE_VERSION, run_checks
from app.evidence.finding import Finding
from app.policy import RoleResult, Ruling, decide
from app.vocabulary import Pair


@dataclass(frozen=True, slots=True)
class ScreeningRuling:
    ruling: Ruling
    findings: tuple[Finding, ...]
    evidence_version: str = EVIDENCE_VERSION

    def evidence_json(self) -> list[dict[str, object]]:
        return [finding.as_json() for finding in self.findings]


def decide_pair(
    pair: Pair, translator: RoleResult, judge: RoleResult, confirmations: int
) -> ScreeningRuling:
    findings = tuple(run_checks(pair))
    return ScreeningRuling(decide(translator, judge, findings, confirmations), findings)
