"""The ruling for one pair: evidence checks plus the policy. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from app.evidence import EVIDENCE_VERSION, run_checks
from app.evidence.finding import Finding
from app.policy import RoleResult, Ruling, decide
from app.vocabulary import Outcome, Pair


class OutcomeFields(TypedDict):
    """A ruling as a screening stores it: the columns an outcome sets."""

    outcome: Outcome
    reasons: list[str]
    evidence: list[dict[str, object]]
    policy_version: str
    evidence_version: str


@dataclass(frozen=True, slots=True)
class ScreeningRuling:
    ruling: Ruling
    findings: tuple[Finding, ...]
    evidence_version: str = EVIDENCE_VERSION

    def evidence_json(self) -> list[dict[str, object]]:
        return [finding.as_json() for finding in self.findings]

    def outcome_fields(self) -> OutcomeFields:
        """The one mapping from a ruling to what is stored, for every writer of an outcome
        (intake of supplied replies, the worker, a rescore), so they cannot drift apart."""
        return OutcomeFields(
            outcome=self.ruling.outcome,
            reasons=list(self.ruling.reasons),
            evidence=self.evidence_json(),
            policy_version=self.ruling.policy_version,
            evidence_version=self.evidence_version,
        )


def decide_pair(
    pair: Pair, translator: RoleResult, judge: RoleResult, confirmations: int
) -> ScreeningRuling:
    findings = tuple(run_checks(pair))
    return ScreeningRuling(decide(translator, judge, findings, confirmations), findings)
