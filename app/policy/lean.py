"""The policy's first rule when a Lean server checked the pair (`policy-5`). Pure.

6. With a Lean check (FAITHSCREEN_LEAN_SERVER_URL set when the pair was screened), its
   status is ruled before any model is asked:
   - `error` (a message of severity error): `flagged`, `lean_error`, and no LLM call;
   - `timeout` or `unavailable`: `needs_review`, `lean_unavailable`, and no LLM call
     (never a pass, never a silent skip to the models);
   - `ok`: the models are asked, and the pair is ruled by rules 1-5 (policy-3) or the
     panel's (policy-4) exactly as without Lean; only the version says Lean was asked.
   The evidence checks' reasons are added as in rule 4 either way.
Without a Lean check nothing changes: the ruling stays policy-3 or policy-4.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from app.evidence.finding import Finding
from app.policy.reasons import Reason, evidence_reasons
from app.policy.ruling import Ruling, outcome_of
from app.vocabulary import LeanStatus, Severity

LEAN_POLICY_VERSION = "policy-5"

# Explicit table with no catch-all: a status added to the vocabulary raises KeyError.
_STOPPING: Mapping[LeanStatus, Reason | None] = {
    LeanStatus.OK: None,
    LeanStatus.ERROR: Reason.LEAN_ERROR,
    LeanStatus.TIMEOUT: Reason.LEAN_UNAVAILABLE,
    LeanStatus.UNAVAILABLE: Reason.LEAN_UNAVAILABLE,
}


def decide_lean(status: LeanStatus, findings: Sequence[Finding]) -> Ruling | None:
    """The ruling when Lean's status decides the pair alone; None when the models must be
    asked (`ok`)."""
    reason = _STOPPING[status]
    if reason is None:
        return None
    reasons = [
        reason.value,
        *evidence_reasons(list(findings), Severity.FLAG),
        *evidence_reasons(list(findings), Severity.REVIEW),
    ]
    return Ruling(outcome_of(reasons), tuple(reasons), LEAN_POLICY_VERSION)


def after_lean(ruling: Ruling) -> Ruling:
    """The models' ruling of a pair Lean elaborated: the same outcome and reasons, under
    the version that says Lean was asked first."""
    return dataclasses.replace(ruling, policy_version=LEAN_POLICY_VERSION)
