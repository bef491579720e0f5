"""The policy: two readings, their confirmations and the evidence -> an outcome.

Pure: no database, no HTTP, no framework imports. The rules (`POLICY_VERSION` changes
whenever any input could be decided differently):

1. A role's reading that is FAITHFUL from an `ok` reply adds no reason, if its model is
   evidential. Anything else adds exactly one reason for that role (`reasons.py`).
1a. A model marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false, recorded on each review,
   so `RoleResult.evidential` is False if any of the role's calls was made under it): its
   FAITHFUL adds `<role>_non_evidential`, which needs review and never passes. Its other
   readings are ruled as anyone's (its standing MISMATCH still flags): only a FAITHFUL
   lets a pair pass, so only a FAITHFUL needs the model to be evidential.
2. A MISMATCH from an `ok` reply, with `confirmations` k > 0, was re-asked k more times by
   the pipeline. It stands (`<role>_mismatch`) only if some repeat is again an `ok`
   MISMATCH; otherwise (repeats FAITHFUL, UNCLEAR, failed, or fewer than k supplied) it is
   `unconfirmed_<role>_mismatch`, which needs review and never passes. With k = 0 it stands.
3. Every other reading adds `<role>_unclear` (the model said UNCLEAR) or `<role>_<status>`.
4. Each evidence severity present adds its bare reason plus one reason per finding code.
5. `flagged` if any reason is a standing mismatch or `evidence_flag`; else `needs_review` if
   there is any reason at all; else `passed`. So a pair passes only when both readings are
   `ok` + FAITHFUL from evidential models and there is no finding of any severity (fail
   closed).

A panel of judges (FAITHSCREEN_JUDGES) is decided by `panel.decide_panel`, `policy-4`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.policy.reasons import (
    FLAGGING_REASONS,
    evidence_reasons,
    mismatch_reason,
    non_evidential_reason,
    not_faithful_reason,
    reason_kind,
)
from app.vocabulary import Outcome, Role, Severity

# Unchanged by contract-2 and evidence-2: their new statuses and finding codes
# (`ambiguous`, `check_failed`) are ruled by the rules that were there (not faithful, or
# evidence of severity review, means needs_review), so no input that existed before is
# decided differently; their new reason codes are new inputs, under the new parser and
# evidence versions that the ruling records beside this one.
# policy-3: rule 1a. A FAITHFUL from a model marked not evidential (which policy-1 would
# have passed) needs review; every reading of an evidential model is ruled as before.
POLICY_VERSION = "policy-3"


@dataclass(frozen=True, slots=True)
class RoleResult:
    """One role's reading, plus the confirmation repeats asked for it (in the order asked).
    `evidential`: False when a call of the role went to a model marked not evidential."""

    reading: Reading
    confirmations: tuple[Reading, ...] = ()
    evidential: bool = True


@dataclass(frozen=True, slots=True)
class Ruling:
    """What the policy concluded. `reasons` is empty exactly when the outcome is `passed`."""

    outcome: Outcome
    reasons: tuple[str, ...]
    policy_version: str


def confirmations_needed(reading: Reading, k: int) -> int:
    """How many confirmation repeats the pipeline must ask for this reading: k or 0."""
    _check_k(k)
    return k if reading.is_mismatch else 0


def decide(
    translator: RoleResult,
    judge: RoleResult,
    findings: Sequence[Finding],
    confirmations: int,
) -> Ruling:
    """Apply the rules in the module docstring.

    Raises ValueError for k < 0, or for more repeats than `confirmations_needed` allows:
    either is a pipeline fault, and guessing which repeats count would hide it.
    """
    reasons = [
        *role_reasons(Role.TRANSLATOR, translator, confirmations),
        *role_reasons(Role.JUDGE, judge, confirmations),
        *evidence_reasons(list(findings), Severity.FLAG),
        *evidence_reasons(list(findings), Severity.REVIEW),
    ]
    return Ruling(outcome_of(reasons), tuple(reasons), POLICY_VERSION)


def role_reasons(role: Role, result: RoleResult, k: int) -> list[str]:
    reading = result.reading
    if len(result.confirmations) > confirmations_needed(reading, k):
        raise ValueError(
            f"{role.value}: {len(result.confirmations)} confirmation readings supplied, "
            f"but at most {confirmations_needed(reading, k)} were to be asked"
        )
    if reading.is_faithful:
        return [] if result.evidential else [non_evidential_reason(role)]
    if reading.is_mismatch:
        standing = k == 0 or any(repeat.is_mismatch for repeat in result.confirmations)
        return [mismatch_reason(role, standing=standing)]
    return [not_faithful_reason(role, reading)]


def outcome_of(reasons: list[str]) -> Outcome:
    if any(reason_kind(reason) in FLAGGING_REASONS for reason in reasons):
        return Outcome.FLAGGED
    return Outcome.NEEDS_REVIEW if reasons else Outcome.PASSED


def _check_k(k: int) -> None:
    if k < 0:
        raise ValueError(f"confirmations must be >= 0, got {k}")
