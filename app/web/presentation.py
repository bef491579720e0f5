"""How the review pages word and colour what was stored. Pure: no database, no HTTP.

The table below has no catch-all: a parse status added to the vocabulary raises KeyError
here (and in the test that walks every status) instead of being shown as something else.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from markupsafe import Markup

from app.page_text import escaped
from app.policy import REASON_DESCRIPTIONS, Reason, reason_kind
from app.vocabulary import ParseStatus, Verdict

# A code span as the policy and the evidence checks write one in their sentences: `x`.
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# Reasons whose qualifier (after the colon) is a finding's code; on every other reason
# that has one it is a panel judge's name (app/policy/reasons.py).
_FINDING_REASONS = frozenset({Reason.EVIDENCE_FLAG, Reason.EVIDENCE_REVIEW})


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
    """The policy's sentence for a reason code, its qualifier named (the finding's code or
    the judge's name) as a code span; the code itself when it is unknown here."""
    try:
        kind = reason_kind(reason)
    except ValueError:
        return reason
    _, _, qualifier = reason.partition(":")
    sentence = REASON_DESCRIPTIONS[kind]
    if not qualifier:
        return sentence
    named = "Finding" if kind in _FINDING_REASONS else "Judge"
    return f"{sentence} {named}: `{qualifier}`."


def prose(text: str) -> Markup:
    """A sentence written with Markdown code spans (the policy's reasons, the evidence
    checks' findings) as HTML: the whole text escaped first (bidi controls marked, as on
    every page), then each `x` made <code>x</code>. Only the tags added here are markup;
    the text between the backticks was escaped before, so it stays text."""
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", escaped(text)))


def plain_prose(text: str) -> str:
    """The same sentence for a place that takes no markup (a title): each code span in
    quotation marks, so `-` still reads as the symbol it names."""
    return _CODE_SPAN.sub(r"“\1”", text)


def when(moment: datetime | None) -> str:
    """A stored time for people: UTC, to the second."""
    return "—" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")
