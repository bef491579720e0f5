"""The two tools that need no server: a reply read with the contract parser, and a reason
code's documented meaning (from app.policy.reasons and the evidence checks, never a copy).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.evidence import CHECK_FAILED, CHECKS
from app.llm.reply_input import MalformedBody, MissingRole, read_given_reply
from app.policy.reasons import FLAGGING_REASONS, REASON_DESCRIPTIONS, Reason, reason_kind
from app.vocabulary import Outcome, ReplyFormat, Role


class ReplyReading(BaseModel):
    verdict: str = Field(description="faithful, mismatch or unclear.")
    parse_status: str = Field(
        description="Why the verdict is what it is: `ok` is the model's word; any other "
        "status (missing, invalid, conflicting, bare_cr, ...) makes the verdict unclear."
    )
    back_translation: str | None
    issues: str | None
    parser_version: str


class ReasonMeaning(BaseModel):
    code: str = Field(description="The code as asked, e.g. `evidence_review:junk_value`.")
    reason: str = Field(description="Its kind: the part before any colon.")
    meaning: str
    qualifier: str | None = Field(
        description="What follows the colon: an evidence finding code or a panel judge."
    )
    qualifier_meaning: str | None = Field(
        description="The evidence check's description, when the qualifier is a finding code."
    )
    outcome: Outcome = Field(
        description="The outcome this reason leads to (flagged or needs_review)."
    )


class UnknownReason(ValueError):
    """A code that is no documented reason."""


class UnreadableReply(ValueError):
    """A tool or JSON reply that is no chat completion body, or comes without a role."""


def read_reply(
    text: str, reply_format: ReplyFormat = ReplyFormat.TEXT, role: Role | None = None
) -> ReplyReading:
    """What the reader of `reply_format` reads in `text` (nothing stored): the reply text
    for text and grammar, the provider's whole response body for tool and json
    (app/llm/reply_input.py); UnreadableReply when such a body does not read."""
    try:
        reading = read_given_reply(reply_format, role, text)
    except (MalformedBody, MissingRole) as error:
        raise UnreadableReply(f"not a {reply_format.value} reply's body: {error}") from error
    return ReplyReading(
        verdict=reading.verdict.value,
        parse_status=reading.parse_status.value,
        back_translation=reading.back_translation,
        issues=reading.issues,
        parser_version=reading.parser_version,
    )


def explain_reason(code: str) -> ReasonMeaning:
    """The documented meaning of a reason code, either shape (`judge_mismatch`,
    `evidence_review:contract_text_in_input`); UnknownReason names the known codes."""
    try:
        reason = reason_kind(code.strip())
    except ValueError as error:
        known = ", ".join(sorted(r.value for r in Reason))
        raise UnknownReason(f"'{code}' is no reason code; the codes are: {known}") from error
    _, colon, qualifier = code.strip().partition(":")
    return ReasonMeaning(
        code=code.strip(),
        reason=reason.value,
        meaning=REASON_DESCRIPTIONS[reason],
        qualifier=qualifier if colon else None,
        qualifier_meaning=finding_meaning(qualifier) if colon else None,
        outcome=Outcome.FLAGGED if reason in FLAGGING_REASONS else Outcome.NEEDS_REVIEW,
    )


def finding_meaning(code: str) -> str | None:
    """An evidence finding code's description (None for another qualifier)."""
    if code == CHECK_FAILED:
        return "an evidence check failed on this pair, so its evidence is missing"
    return next((check.description for check in CHECKS if check.code == code), None)
