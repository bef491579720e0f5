"""How the review pages word and colour what was stored. Pure: no database, no HTTP.

The table below has no catch-all: a parse status added to the vocabulary raises KeyError
here (and in the test that walks every status) instead of being shown as something else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from app.policy import REASON_DESCRIPTIONS, reason_kind
from app.vocabulary import ParseStatus, Verdict


@dataclass(frozen=True, slots=True)
class VerdictShown:
    """One review's verdict as a reviewer should see it: a label, a CSS class, a sentence."""

    label: str
    css: str
    explanation: str


# Why a reply gave no usable verdict. "The model said unclear" is a verdict from a readable
# reply (handled in `verdict_shown`); these are replies nobody could read, or no reply at all.
_NOT_READ: Mapping[ParseStatus, VerdictShown] = {
    ParseStatus.MISSING: VerdictShown(
        "unreadable", "unreadable", "The reply had no VERDICT field (missing)."
    ),
    ParseStatus.INVALID: VerdictShown(
        "unreadable", "unreadable", "The reply's VERDICT was not FAITHFUL, MISMATCH or UNCLEAR."
    ),
    ParseStatus.CONFLICTING: VerdictShown(
        "unreadable", "unreadable", "The reply gave verdicts that disagree (conflicting)."
    ),
    ParseStatus.BARE_CR: VerdictShown(
        "unreadable", "unreadable", "The reply held a bare carriage return (bare_cr)."
    ),
    ParseStatus.AMBIGUOUS: VerdictShown(
        "unreadable",
        "unreadable",
        "Read as a person reads it, the reply gives other verdicts than the parser found: "
        "a line break other than a newline (such as U+2028), an invisible character or "
        "`VERDICT :` hides another VERDICT line (ambiguous).",
    ),
    ParseStatus.EMPTY: VerdictShown("unreadable", "unreadable", "The reply was empty."),
    ParseStatus.TRUNCATED: VerdictShown(
        "truncated",
        "truncated",
        "The reply did not end as complete: cut at the length limit, or ended with a "
        "finish reason the contract does not list as complete (or none).",
    ),
    ParseStatus.PROVIDER_ERROR: VerdictShown(
        "provider error", "provider-error", "The call failed at the provider: no reply."
    ),
    ParseStatus.REFUSED: VerdictShown(
        "refused", "refused", "The provider declined to answer (content filter or refusal)."
    ),
}
_VERDICTS: Mapping[Verdict, VerdictShown] = {
    Verdict.FAITHFUL: VerdictShown("faithful", "faithful", "The model read the pair as faithful."),
    Verdict.MISMATCH: VerdictShown("mismatch", "mismatch", "The model found a mismatch."),
    Verdict.UNCLEAR: VerdictShown(
        "model said unclear", "unclear", "A readable reply: the model could not decide."
    ),
}


def verdict_shown(verdict: str, parse_status: str) -> VerdictShown:
    """A non-ok status wins over the verdict it carries, as in the policy."""
    status = ParseStatus(parse_status)
    if status is ParseStatus.OK:
        return _VERDICTS[Verdict(verdict)]
    return _NOT_READ[status]


def describe_reason(reason: str) -> str:
    """The policy's sentence for a reason code; the code itself when it is unknown here."""
    try:
        kind = reason_kind(reason)
    except ValueError:
        return reason
    _, _, finding = reason.partition(":")
    sentence = REASON_DESCRIPTIONS[kind]
    return f"{sentence} Finding: {finding}." if finding else sentence


def when(moment: datetime | None) -> str:
    """A stored time for people: UTC, to the second."""
    return "—" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")
