"""Turning calls into review records, and stored reviews back into what the plan needs."""

from __future__ import annotations

from app.contract import PARSER_VERSION, failed_call_reading, read_supplied
from app.contract.formats import READER_VERSIONS, grammar_version, read_reply
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.llm.call import CallResult
from app.models.review import Review
from app.pipeline.plan import NextCall, PastCall
from app.prompts import Message, messages_sha256, prompt_version
from app.repositories.reviews import ReviewRecord
from app.vocabulary import ParseStatus, Purpose, ReplyFormat, Role


def reading_of_call(
    result: CallResult, reply_format: ReplyFormat = ReplyFormat.TEXT, role: Role = Role.JUDGE
) -> Reading:
    """The reading of one finished call by the reader of the format it was asked in
    (app/contract/formats.py; `role` says which fields a tool or JSON reply must hold):
    failed calls and refusals never carry a verdict, and carry that reader's version."""
    version = READER_VERSIONS[reply_format]
    if result.failed:
        return failed_call_reading(ParseStatus.PROVIDER_ERROR, version)
    if result.refusal:
        return failed_call_reading(ParseStatus.REFUSED, version)
    reply = ProviderReply(result.content, result.finish_reason, result.tool_calls)
    return read_reply(reply_format, role, reply)


def call_record(
    screening_id: str,
    role: Role,
    step: NextCall,
    messages: list[Message],
    result: CallResult,
    judge_name: str | None = None,
    *,
    evidential: bool = True,
    reply_format: ReplyFormat = ReplyFormat.TEXT,
) -> ReviewRecord:
    """`judge_name`: a judge's name (None: the single judge, or the translator);
    `evidential`: the provider's FAITHSCREEN_*_EVIDENTIAL when the call was made;
    `reply_format`: its FAITHSCREEN_*_REPLY_FORMAT, which the reply was asked and is read in."""
    reading = reading_of_call(result, reply_format, role)
    return ReviewRecord(
        screening_id=screening_id,
        role=role,
        judge_name=judge_name,
        attempt=step.attempt,
        purpose=step.purpose,
        prompt_version=prompt_version(reply_format),
        messages=list(messages),
        messages_sha256=messages_sha256(messages),
        # Stored as sent, U+0000 included: the columns are ProviderText (app/db/types.py).
        raw_response=result.content,
        raw_body=result.raw_body,
        verdict=reading.verdict,
        parse_status=reading.parse_status,
        back_translation=reading.back_translation,
        issues=reading.issues,
        finish_reason=result.finish_reason,
        refusal=result.refusal,
        model=result.model,
        usage=dict(result.usage),
        http_status=result.http_status,
        latency_ms=result.latency_ms,
        error=result.error,
        parser_version=reading.parser_version,
        supplied=False,
        max_tokens=result.max_tokens,
        evidential=evidential,
        reply_format=reply_format,
        grammar_version=grammar_version(reply_format),
    )


def supplied_record(
    screening_id: str, role: Role, reply: str, judge_name: str | None = None
) -> ReviewRecord:
    """A reply the client supplied, read by the reply contract as a provider's complete
    reply would be: it has no finish reason, and no provider could have cut it."""
    reading = read_supplied(reply)
    return ReviewRecord(
        screening_id=screening_id,
        role=role,
        judge_name=judge_name,
        attempt=1,
        purpose=Purpose.REVIEW,
        prompt_version=None,
        messages=None,
        messages_sha256=None,
        raw_response=reply,
        raw_body=None,
        verdict=reading.verdict,
        parse_status=reading.parse_status,
        back_translation=reading.back_translation,
        issues=reading.issues,  # intake rejects U+0000 in supplied replies
        finish_reason=None,
        refusal=None,
        model=None,
        usage={},
        http_status=None,
        latency_ms=None,
        error=None,
        parser_version=reading.parser_version,
        supplied=True,
        max_tokens=None,
    )


def past_call(review: Review) -> PastCall:
    reading = Reading(
        verdict=review.verdict,
        parse_status=review.parse_status,
        back_translation=review.back_translation,
        issues=review.issues,
        parser_version=review.parser_version or PARSER_VERSION,
    )
    return PastCall(
        attempt=review.attempt,
        purpose=review.purpose,
        reading=reading,
        raw_response=review.raw_response,
        max_tokens=review.max_tokens,
        evidential=review.evidential,
    )


def reading_of_record(record: ReviewRecord) -> Reading:
    return Reading(
        verdict=record.verdict,
        parse_status=record.parse_status,
        back_translation=record.back_translation,
        issues=record.issues,
        parser_version=record.parser_version,
    )
