"""Replaying one stored screening with the current parser and policy, without a model. Pure.

Every stored raw reply is read again (`reread`), then each role's calls are walked the way
the pipeline's plan (`app/pipeline/plan.py`) would walk them with the new readings
(`replay_role`): the first `ok` reading is the role's answer, format retries follow an
unreadable reply, confirmations follow an `ok` mismatch. Where the plan would now ask for a
call that was never made (a format retry after a reply the old parser could read, a
confirmation after a reply it read as faithful), the replay stops there: no call is made,
and the ruling is what the policy gives without it, which never passes (an unreadable
reading stays unreadable, an unconfirmed mismatch needs review). Such a replay is marked
`incomplete` so the diff can say how many there were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from app.contract import PARSER_VERSION, read_call, read_supplied
from app.contract.call import failed_call_reading
from app.contract.formats import READER_VERSIONS, read_reply
from app.contract.provider_reply import ProviderReply, ToolCall
from app.contract.reading import Reading
from app.llm.body import MalformedBody, read_completion
from app.pipeline.judged import decide_judged, judge_names
from app.pipeline.plan import Limits, PastCall, all_evidential, plan_next
from app.pipeline.ruling import ScreeningRuling
from app.policy import Panel, RoleResult
from app.repositories.rescore_rows import StoredCall
from app.vocabulary import Pair, ParseStatus, Purpose, ReplyFormat, Role

# A provider's reply asked for as text (content, finish reason, tool calls) -> Reading.
Reader = Callable[[ProviderReply], Reading]
# reply -> Reading: the entry point for a reply the client supplied (no finish reason).
SuppliedReader = Callable[[str], Reading]


def read_text_reply(reply: ProviderReply) -> Reading:
    """The installed parser's reading of a text or grammar reply (app/contract/call.py)."""
    return read_call(reply.content, reply.finish_reason, reply.tool_calls)


@dataclass(frozen=True, slots=True)
class Parser:
    """The parser a replay reads with, and the version every reading it gives carries (a
    parameter, so that a changed parser can be replayed before it is installed)."""

    read: Reader = read_text_reply
    version: str = PARSER_VERSION
    read_supplied: SuppliedReader = read_supplied


# The parser installed now: what `faithscreen rescore` and POST /v1/rescore read with.
CURRENT_PARSER = Parser()


# Statuses that record what happened to the call, not what its text says: there is no
# text to read again (a failed call) or the provider's refusal came in a field of its own.
CALL_OUTCOME_STATUSES = frozenset({ParseStatus.PROVIDER_ERROR, ParseStatus.REFUSED})


@dataclass(frozen=True, slots=True)
class RoleReplay:
    result: RoleResult
    # The plan wanted a call that was never made: the result is decided without it.
    incomplete: bool


@dataclass(frozen=True, slots=True)
class Replay:
    ruling: ScreeningRuling
    # review id -> its new reading, for every stored call (used or not by the plan).
    readings: dict[int, Reading]
    incomplete: bool


# Formats whose replies the contract parser does not read: each has its own reader.
STRUCTURED_FORMATS = frozenset({ReplyFormat.TOOL, ReplyFormat.JSON})


def reread(call: StoredCall, parser: Parser = CURRENT_PARSER) -> Reading:
    """The stored reply read again, under `parser`'s version. A failed call, or one refused
    in the provider's own refusal field, keeps its status with no fields, as the pipeline
    recorded it: nothing in it is an answer for the parser. A supplied reply is read as the
    pipeline read it, without a finish reason (it never had one). A tool or JSON reply is
    read by its own format's reader, never as text, under that reader's version; a text
    reply with the tool calls its stored body holds (contract-4 finds any `invalid`)."""
    status = call.reading.parse_status
    if call.reply_format in STRUCTURED_FORMATS and not call.supplied:
        reading = read_reply(call.reply_format, call.role, stored_reply(call))
        # A finish-reason refusal is the reader's own (tool-1, json-1): kept as it reads.
        if status in CALL_OUTCOME_STATUSES and reading.parse_status is not status:
            return failed_call_reading(status, READER_VERSIONS[call.reply_format])
        return reading
    reading = (
        parser.read_supplied(call.raw_response or "")
        if call.supplied
        else parser.read(stored_reply(call))
    )
    if status in CALL_OUTCOME_STATUSES and reading.parse_status is not status:
        reading = failed_call_reading(status)
    return replace(reading, parser_version=parser.version)


def stored_reply(call: StoredCall) -> ProviderReply:
    """A provider's reply as stored: its content and finish reason, with the tool calls
    read again from its raw body. A body that does not read (never so for a reply that
    came in) gives a tool call that cannot be read, which every reader finds `invalid`, so
    nothing is read from what is not there; so does a missing body for a tool or JSON
    reply. A text reply stored without a body (a call that failed before any came; every
    reply that came in has its body) is read from its content alone."""
    if not call.raw_body and call.reply_format not in STRUCTURED_FORMATS:
        return ProviderReply(call.raw_response, call.finish_reason)
    try:
        calls = read_completion(call.raw_body).tool_calls if call.raw_body else None
    except MalformedBody:
        calls = None
    unreadable = (ToolCall(None, None),)
    return ProviderReply(
        call.raw_response, call.finish_reason, unreadable if calls is None else calls
    )


def format_retries_then(calls: Sequence[StoredCall], setting: int) -> int:
    """The format-retry limit the pipeline had for these calls. Where they end in retries
    that never got an `ok` reading, the limit was exactly the retries made (whatever the
    setting is today); where a reading was `ok`, the pipeline stopped early and its limit
    is unknown: today's setting, at least the retries made. Supplied replies: none."""
    if any(call.supplied for call in calls):
        return 0
    made = sum(1 for call in calls if call.purpose is Purpose.FORMAT_RETRY)
    answered = any(
        c.reading.parse_status is ParseStatus.OK
        for c in calls
        if c.purpose is not Purpose.CONFIRMATION
    )
    return max(made, setting) if answered else made


def replay_role(
    calls: Sequence[StoredCall], readings: dict[int, Reading], limits: Limits
) -> RoleReplay:
    """The role's result as the plan reaches it over the stored calls, in attempt order,
    with `readings` in place of the stored ones."""
    limits = replace(limits, format_retries=format_retries_then(calls, limits.format_retries))
    remaining = sorted(calls, key=lambda c: c.attempt)
    past: list[PastCall] = []
    while True:
        step = plan_next(past, limits)
        if isinstance(step, RoleResult):
            return RoleReplay(step, incomplete=False)
        made = next((c for c in remaining if c.purpose is step.purpose), None)
        if made is None:
            return RoleReplay(_without_missing_call(past), incomplete=True)
        remaining = [c for c in remaining if c.attempt > made.attempt]
        past.append(
            PastCall(
                attempt=step.attempt,
                purpose=step.purpose,
                reading=readings[made.review_id],
                raw_response=made.raw_response,
                max_tokens=step.max_tokens,
                # The flag the call was made under, never today's FAITHSCREEN_*_EVIDENTIAL.
                evidential=made.evidential,
            )
        )


def _without_missing_call(past: Sequence[PastCall]) -> RoleResult:
    """What the plan concludes when it cannot have the call it asked for next: the last
    primary reading stands (exhausted retries), with the confirmations made so far."""
    primary = [c for c in past if c.purpose is not Purpose.CONFIRMATION]
    chosen = next((c for c in primary if c.reading.parse_status is ParseStatus.OK), primary[-1])
    repeats = tuple(c.reading for c in past if c.purpose is Purpose.CONFIRMATION)
    return RoleResult(chosen.reading, repeats, evidential=all_evidential(past))


def replay(
    pair: Pair,
    calls: Sequence[StoredCall],
    *,
    confirmations: int,
    format_retries: int,
    parser: Parser = CURRENT_PARSER,
    panel: Panel | None = None,
) -> Replay:
    """Re-read every call and re-decide the pair, each judge's calls walked apart (a
    panel's, or the single judge's). Raises ValueError when the translator or a judge has
    no stored review call: there is nothing to replay (see `replayable`)."""
    if not replayable(calls, panel):
        raise ValueError("each role and judge needs a stored review call: nothing to replay")
    readings = {call.review_id: reread(call, parser) for call in calls}
    # Token budgets do not matter here: no call is made. Only the counts steer the plan.
    limits = Limits(format_retries, confirmations, max_tokens=1, max_tokens_ceiling=1)
    translator = replay_role(_calls_of(calls, Role.TRANSLATOR, None), readings, limits)
    judges = {
        name: replay_role(_calls_of(calls, Role.JUDGE, name if panel else None), readings, limits)
        for name in judge_names(panel)
    }
    results = {name: judged.result for name, judged in judges.items()}
    ruling = decide_judged(pair, translator.result, results, panel, confirmations)
    incomplete = translator.incomplete or any(j.incomplete for j in judges.values())
    return Replay(ruling, readings, incomplete)


def _calls_of(calls: Sequence[StoredCall], role: Role, judge: str | None) -> list[StoredCall]:
    """A role's calls; of a panel's judges, `judge`'s alone (None: every judge call, the
    single judge's)."""
    return [c for c in calls if c.role is role and (judge is None or c.judge_name == judge)]


def replayable(calls: Sequence[StoredCall], panel: Panel | None = None) -> bool:
    """The translator and every judge have their first call stored (a screening given up
    as `job_failed` before its calls returned has nothing to read again)."""
    reviews = [c for c in calls if c.purpose is Purpose.REVIEW]
    if {c.role for c in reviews} != set(Role):
        return False
    if panel is None:
        return True
    return set(panel.judges) <= {c.judge_name for c in reviews if c.role is Role.JUDGE}
