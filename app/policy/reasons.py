"""Reason codes: why a screening did not pass. Every code the policy emits is named here.

A ruling's reasons are strings of two shapes, so a report can count at either grain:

- a bare `Reason` value, e.g. `judge_mismatch`, `translator_truncated`, `evidence_review`;
- `<reason>:<qualifier>`, where the qualifier is one of two things:
  - an evidence finding code: `evidence_review:contract_text_in_input`, one per distinct
    finding code, next to the bare `evidence_flag` / `evidence_review`. The finding codes
    themselves are documented with the evidence checks (`app.evidence`);
  - a panel judge's name (FAITHSCREEN_JUDGES): `judge_mismatch:a`, `judge_truncated:b`,
    `judge_minority_mismatch:c`. A panel's judge reasons always carry their judge's name,
    with no bare `judge_*` beside them; the single judge's reasons never carry one.

`reason_kind()` maps either shape back to its `Reason`. A passed ruling has no reasons:
reasons explain why a pair did not pass, and a pass needs no explanation beyond the outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from app.contract.reading import Reading
from app.evidence.finding import Finding
from app.vocabulary import ParseStatus, Role, Severity, Verdict


class Reason(StrEnum):
    TRANSLATOR_MISMATCH = "translator_mismatch"
    UNCONFIRMED_TRANSLATOR_MISMATCH = "unconfirmed_translator_mismatch"
    TRANSLATOR_UNCLEAR = "translator_unclear"
    TRANSLATOR_MISSING = "translator_missing"
    TRANSLATOR_INVALID = "translator_invalid"
    TRANSLATOR_CONFLICTING = "translator_conflicting"
    TRANSLATOR_BARE_CR = "translator_bare_cr"
    TRANSLATOR_AMBIGUOUS = "translator_ambiguous"
    TRANSLATOR_TRUNCATED = "translator_truncated"
    TRANSLATOR_EMPTY = "translator_empty"
    TRANSLATOR_PROVIDER_ERROR = "translator_provider_error"
    TRANSLATOR_REFUSED = "translator_refused"
    # An `ok` FAITHFUL from a model marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false).
    TRANSLATOR_NON_EVIDENTIAL = "translator_non_evidential"
    JUDGE_MISMATCH = "judge_mismatch"
    UNCONFIRMED_JUDGE_MISMATCH = "unconfirmed_judge_mismatch"
    JUDGE_UNCLEAR = "judge_unclear"
    JUDGE_MISSING = "judge_missing"
    JUDGE_INVALID = "judge_invalid"
    JUDGE_CONFLICTING = "judge_conflicting"
    JUDGE_BARE_CR = "judge_bare_cr"
    JUDGE_AMBIGUOUS = "judge_ambiguous"
    JUDGE_TRUNCATED = "judge_truncated"
    JUDGE_EMPTY = "judge_empty"
    JUDGE_PROVIDER_ERROR = "judge_provider_error"
    JUDGE_REFUSED = "judge_refused"
    JUDGE_NON_EVIDENTIAL = "judge_non_evidential"
    # A panel under the `majority` rule: some judges' MISMATCH stands, but not more than
    # half of them (`panel_split`, with one `judge_minority_mismatch:<name>` per such judge).
    PANEL_SPLIT = "panel_split"
    JUDGE_MINORITY_MISMATCH = "judge_minority_mismatch"
    EVIDENCE_FLAG = "evidence_flag"
    EVIDENCE_REVIEW = "evidence_review"
    # Not from the policy: the worker gave up on the screening's job (it kept failing).
    JOB_FAILED = "job_failed"
    # A Lean server checked the pair (FAITHSCREEN_LEAN_SERVER_URL; app/policy/lean.py).
    LEAN_ERROR = "lean_error"
    LEAN_UNAVAILABLE = "lean_unavailable"


_MISMATCH = "said MISMATCH and the policy let it stand (confirmed, or no confirmation asked)"
_UNCONFIRMED = "said MISMATCH, but no confirmation repeat said MISMATCH again"
_UNCLEAR = "said UNCLEAR: the model could not decide"
_MISSING = "reply had no VERDICT field"
_INVALID = "reply's VERDICT was not one of FAITHFUL, MISMATCH, UNCLEAR"
_CONFLICTING = "reply gave verdicts that disagree"
_BARE_CR = "reply held a bare carriage return, so its lines were ambiguous"
_AMBIGUOUS = (
    "reply read as a person reads it (every Unicode line break a line end, invisible "
    "characters dropped) gave other verdicts than the parser's strict reading"
)
# Not only the length limit: any finish reason the contract does not list as complete.
_TRUNCATED = (
    "reply did not end as complete (cut at the length limit, or another or no finish reason)"
)
_EMPTY = "reply was empty"
_PROVIDER_ERROR = "call failed at the provider (after transport retries)"
_REFUSED = "provider declined to answer (content filter or refusal)"
_NON_EVIDENTIAL = (
    "said FAITHFUL, but its model is marked not evidential (FAITHSCREEN_{}_EVIDENTIAL=false, "
    "recorded on its review): its FAITHFUL is shown, never counted towards a pass"
)

REASON_DESCRIPTIONS: Mapping[Reason, str] = {
    Reason.TRANSLATOR_MISMATCH: f"The translator {_MISMATCH}.",
    Reason.UNCONFIRMED_TRANSLATOR_MISMATCH: f"The translator {_UNCONFIRMED}.",
    Reason.TRANSLATOR_UNCLEAR: f"The translator {_UNCLEAR}.",
    Reason.TRANSLATOR_MISSING: f"The translator's {_MISSING}.",
    Reason.TRANSLATOR_INVALID: f"The translator's {_INVALID}.",
    Reason.TRANSLATOR_CONFLICTING: f"The translator's {_CONFLICTING}.",
    Reason.TRANSLATOR_BARE_CR: f"The translator's {_BARE_CR}.",
    Reason.TRANSLATOR_AMBIGUOUS: f"The translator's {_AMBIGUOUS}.",
    Reason.TRANSLATOR_TRUNCATED: f"The translator's {_TRUNCATED}.",
    Reason.TRANSLATOR_EMPTY: f"The translator's {_EMPTY}.",
    Reason.TRANSLATOR_PROVIDER_ERROR: f"The translator's {_PROVIDER_ERROR}.",
    Reason.TRANSLATOR_REFUSED: f"The translator's {_REFUSED}.",
    Reason.TRANSLATOR_NON_EVIDENTIAL: f"The translator {_NON_EVIDENTIAL.format('TRANSLATOR')}.",
    Reason.JUDGE_MISMATCH: f"The judge {_MISMATCH}.",
    Reason.UNCONFIRMED_JUDGE_MISMATCH: f"The judge {_UNCONFIRMED}.",
    Reason.JUDGE_UNCLEAR: f"The judge {_UNCLEAR}.",
    Reason.JUDGE_MISSING: f"The judge's {_MISSING}.",
    Reason.JUDGE_INVALID: f"The judge's {_INVALID}.",
    Reason.JUDGE_CONFLICTING: f"The judge's {_CONFLICTING}.",
    Reason.JUDGE_BARE_CR: f"The judge's {_BARE_CR}.",
    Reason.JUDGE_AMBIGUOUS: f"The judge's {_AMBIGUOUS}.",
    Reason.JUDGE_TRUNCATED: f"The judge's {_TRUNCATED}.",
    Reason.JUDGE_EMPTY: f"The judge's {_EMPTY}.",
    Reason.JUDGE_PROVIDER_ERROR: f"The judge's {_PROVIDER_ERROR}.",
    Reason.JUDGE_REFUSED: f"The judge's {_REFUSED}.",
    Reason.JUDGE_NON_EVIDENTIAL: (
        f"The judge {_NON_EVIDENTIAL.format('JUDGE')} (a panel judge: "
        "FAITHSCREEN_JUDGE_<NAME>_EVIDENTIAL, its name after the colon)."
    ),
    Reason.PANEL_SPLIT: (
        "Under the panel rule `majority`, a standing MISMATCH came from some of the judges, "
        "but not from more than half of them: a person looks."
    ),
    Reason.JUDGE_MINORITY_MISMATCH: (
        "The judge named after the colon said MISMATCH and it stands, but it is in the "
        "minority under the panel rule `majority` (so it does not flag the pair)."
    ),
    Reason.EVIDENCE_FLAG: "A finding of severity `flag` (its code follows the colon).",
    Reason.EVIDENCE_REVIEW: "A finding of severity `review` (its code follows the colon).",
    Reason.JOB_FAILED: "The screening's job kept failing and was given up; its error is kept.",
    Reason.LEAN_ERROR: (
        "Lean did not elaborate the header and formal statement: it reported a message of "
        "severity `error` (shown at its line and column). No model was asked."
    ),
    Reason.LEAN_UNAVAILABLE: (
        "The Lean server gave no usable answer (a timeout, no free REPL after the retries, "
        "unreachable, refused the key, or a body it does not send): a person looks. No "
        "model was asked."
    ),
}

# Reasons that make the outcome `flagged`; every other reason makes it `needs_review`.
FLAGGING_REASONS: frozenset[Reason] = frozenset(
    {Reason.TRANSLATOR_MISMATCH, Reason.JUDGE_MISMATCH, Reason.EVIDENCE_FLAG, Reason.LEAN_ERROR}
)

# Explicit tables with no catch-all: a status or role added to the vocabulary raises
# KeyError here (and in the tests that walk every value) instead of slipping through.
_STATUS_REASONS: Mapping[tuple[Role, ParseStatus], Reason] = {
    (Role.TRANSLATOR, ParseStatus.MISSING): Reason.TRANSLATOR_MISSING,
    (Role.TRANSLATOR, ParseStatus.INVALID): Reason.TRANSLATOR_INVALID,
    (Role.TRANSLATOR, ParseStatus.CONFLICTING): Reason.TRANSLATOR_CONFLICTING,
    (Role.TRANSLATOR, ParseStatus.BARE_CR): Reason.TRANSLATOR_BARE_CR,
    (Role.TRANSLATOR, ParseStatus.AMBIGUOUS): Reason.TRANSLATOR_AMBIGUOUS,
    (Role.TRANSLATOR, ParseStatus.TRUNCATED): Reason.TRANSLATOR_TRUNCATED,
    (Role.TRANSLATOR, ParseStatus.EMPTY): Reason.TRANSLATOR_EMPTY,
    (Role.TRANSLATOR, ParseStatus.PROVIDER_ERROR): Reason.TRANSLATOR_PROVIDER_ERROR,
    (Role.TRANSLATOR, ParseStatus.REFUSED): Reason.TRANSLATOR_REFUSED,
    (Role.JUDGE, ParseStatus.MISSING): Reason.JUDGE_MISSING,
    (Role.JUDGE, ParseStatus.INVALID): Reason.JUDGE_INVALID,
    (Role.JUDGE, ParseStatus.CONFLICTING): Reason.JUDGE_CONFLICTING,
    (Role.JUDGE, ParseStatus.BARE_CR): Reason.JUDGE_BARE_CR,
    (Role.JUDGE, ParseStatus.AMBIGUOUS): Reason.JUDGE_AMBIGUOUS,
    (Role.JUDGE, ParseStatus.TRUNCATED): Reason.JUDGE_TRUNCATED,
    (Role.JUDGE, ParseStatus.EMPTY): Reason.JUDGE_EMPTY,
    (Role.JUDGE, ParseStatus.PROVIDER_ERROR): Reason.JUDGE_PROVIDER_ERROR,
    (Role.JUDGE, ParseStatus.REFUSED): Reason.JUDGE_REFUSED,
}

# What an `ok` reading that is not FAITHFUL means, per role. For a mismatch the first
# entry is the standing reason and the second the unconfirmed one.
_UNCLEAR_REASONS: Mapping[Role, Reason] = {
    Role.TRANSLATOR: Reason.TRANSLATOR_UNCLEAR,
    Role.JUDGE: Reason.JUDGE_UNCLEAR,
}
_MISMATCH_REASONS: Mapping[Role, tuple[Reason, Reason]] = {
    Role.TRANSLATOR: (Reason.TRANSLATOR_MISMATCH, Reason.UNCONFIRMED_TRANSLATOR_MISMATCH),
    Role.JUDGE: (Reason.JUDGE_MISMATCH, Reason.UNCONFIRMED_JUDGE_MISMATCH),
}

_NON_EVIDENTIAL_REASONS: Mapping[Role, Reason] = {
    Role.TRANSLATOR: Reason.TRANSLATOR_NON_EVIDENTIAL,
    Role.JUDGE: Reason.JUDGE_NON_EVIDENTIAL,
}

_SEVERITY_REASONS: Mapping[Severity, Reason] = {
    Severity.FLAG: Reason.EVIDENCE_FLAG,
    Severity.REVIEW: Reason.EVIDENCE_REVIEW,
}


def not_faithful_reason(role: Role, reading: Reading) -> Reason:
    """The reason for a reading that is neither FAITHFUL nor a mismatch read from an ok reply.

    A non-ok status always wins over the verdict it carries: only `ok` verdicts are the
    model's word (a reading that breaks that invariant still cannot pass).
    """
    if reading.parse_status is ParseStatus.OK and reading.verdict is Verdict.UNCLEAR:
        return _UNCLEAR_REASONS[role]
    return _STATUS_REASONS[(role, reading.parse_status)]


def mismatch_reason(role: Role, *, standing: bool) -> Reason:
    standing_reason, unconfirmed_reason = _MISMATCH_REASONS[role]
    return standing_reason if standing else unconfirmed_reason


def non_evidential_reason(role: Role) -> Reason:
    """The reason for an `ok` FAITHFUL whose model is marked not evidential."""
    return _NON_EVIDENTIAL_REASONS[role]


def evidence_reasons(findings: list[Finding], severity: Severity) -> list[str]:
    """The bare evidence reason, then one `<reason>:<code>` per distinct code, in order."""
    codes = [finding.code for finding in findings if finding.severity is severity]
    if not codes:
        return []
    reason = _SEVERITY_REASONS[severity]
    return [reason, *(f"{reason}:{code}" for code in dict.fromkeys(codes))]


def judge_reason(reason: Reason, judge: str | None) -> str:
    """A judge reason as a ruling carries it: qualified by a panel judge's name, bare for
    the single judge (None)."""
    return reason.value if judge is None else f"{reason.value}:{judge}"


def reason_kind(reason: str) -> Reason:
    """The `Reason` of either reason shape; raises ValueError for an unknown code."""
    return Reason(reason.partition(":")[0])
