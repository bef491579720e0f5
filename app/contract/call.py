"""The reading for one LLM call: what the call's ending says first, then the reply text.

Pure, like the parser. A provider's reply is read for a verdict only when its finish reason
says the model ended the reply itself: anything else could be a reply cut short, and a
cut-off reply may still hold a complete-looking VERDICT line written before the end. The
reasons are an explicit table (`ENDINGS`) with no catch-all that lets a reply through. The
order of the checks is part of the contract:

1. finish reason a refusal (`content_filter`, ...) -> `refused`, even with no content: the
   provider declined, which is not a format fault and is never re-asked.
2. finish reason anything but a completion (`length`, `max_tokens`, an unknown reason, no
   reason at all) -> `truncated`, whatever the content says; re-asked as a format retry.
3. any tool call in the reply -> `invalid` (contract-4), whatever the content says: the
   reply was asked for as text, a tool call is another format's answer that may say
   otherwise (a FAITHFUL text beside a `submit_review` call saying MISMATCH), and the
   reader does not choose between them. Re-asked as a format retry; never read leniently.
   Some servers end such a reply with `stop`, not `tool_calls`, so the finish reason alone
   does not catch it (contract-3 read the content alone there).
4. no content, or whitespace only -> `empty`.
5. otherwise the reply contract (`parse_reply`).

In cases 1, 2 and 3 the back-translation and issues are still read from whatever content
there is, so a person sees what the model wrote; the verdict is always `unclear`.

A reply the client supplied had no provider and so no finish reason: it is whole by nature
(the client sent all of it) and is read by `read_supplied`, which is cases 4 and 5 alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType

from app.contract.parser import PARSER_VERSION, parse_reply
from app.contract.provider_reply import ToolCall
from app.contract.reading import Reading
from app.vocabulary import ParseStatus, Verdict

# Statuses that describe a call rather than a reply text: the only ones a reading
# without parsed content may carry.
CALL_STATUSES: frozenset[ParseStatus] = frozenset(
    {
        ParseStatus.TRUNCATED,
        ParseStatus.EMPTY,
        ParseStatus.PROVIDER_ERROR,
        ParseStatus.REFUSED,
    }
)


class Ending(StrEnum):
    """What a finish reason says of the reply it ends."""

    # The model ended the reply itself (an end-of-sequence token or a stop sequence).
    COMPLETE = "complete"
    # Generation stopped at a limit: the reply may be missing its end.
    CUT = "cut"
    # The provider withheld or stopped the reply for its own policy.
    REFUSED = "refused"


# Every finish reason the contract knows, exactly as servers spell it: case is not folded,
# because each server sends one fixed spelling and folding would accept spellings no server
# is known to send ("Stop", "END_TURN") as complete. Gemini's upper-case words are listed
# as Gemini spells them. Sources are in docs/contract.md. A reason not here, and a missing
# one, is read as a cut reply (`truncated`): never as complete.
ENDINGS: Mapping[str, Ending] = MappingProxyType(
    {
        # OpenAI, llama.cpp server, vLLM, TGI (end-of-sequence), and OpenAI layers over
        # Anthropic and Gemini.
        "stop": Ending.COMPLETE,
        # Anthropic Messages, passed through by some Anthropic-compatible layers.
        "end_turn": Ending.COMPLETE,
        # Anthropic Messages and TGI: a stop sequence ended the reply, as `stop` says on
        # OpenAI.
        "stop_sequence": Ending.COMPLETE,
        # Gemini, passed through by some Gemini-compatible layers.
        "STOP": Ending.COMPLETE,
        # OpenAI, llama.cpp server, vLLM, TGI: max_tokens or the context was reached.
        "length": Ending.CUT,
        # Anthropic Messages.
        "max_tokens": Ending.CUT,
        "model_context_window_exceeded": Ending.CUT,
        # Mistral: the model's context was full.
        "model_length": Ending.CUT,
        # Gemini.
        "MAX_TOKENS": Ending.CUT,
        # OpenAI and Azure OpenAI.
        "content_filter": Ending.REFUSED,
        # Anthropic Messages.
        "refusal": Ending.REFUSED,
        # Gemini.
        "SAFETY": Ending.REFUSED,
        "RECITATION": Ending.REFUSED,
        "BLOCKLIST": Ending.REFUSED,
        "PROHIBITED_CONTENT": Ending.REFUSED,
        "SPII": Ending.REFUSED,
    }
)


# The `tool` reply format's table: ENDINGS, and `tool_calls`, which OpenAI, llama.cpp, vLLM
# and Mistral send when the reply is a tool call. Only for that format: a text or JSON reply
# ending in a tool call is not the reply asked for, and ENDINGS reads it as cut. A forced
# tool call may also end in `stop` (OpenAI sends `stop` when `tool_choice` names the
# function), which stays complete.
TOOL_ENDINGS: Mapping[str, Ending] = MappingProxyType({**ENDINGS, "tool_calls": Ending.COMPLETE})


def ending_of(finish_reason: str | None, endings: Mapping[str, Ending] = ENDINGS) -> Ending:
    """What `finish_reason` says of its reply under `endings` (ENDINGS, or TOOL_ENDINGS for
    the tool format); unknown or missing: `CUT` (fail closed)."""
    if finish_reason is None:
        return Ending.CUT
    return endings.get(finish_reason, Ending.CUT)


def read_call(
    content: str | None, finish_reason: str | None, tool_calls: Sequence[ToolCall] = ()
) -> Reading:
    """The reading for one completed provider call asked for as text (see the module
    docstring for the order); `tool_calls` are the reply's own, every one of them."""
    ending = ending_of(finish_reason)
    if ending is Ending.REFUSED:
        return _unclear_with_fields(content or "", ParseStatus.REFUSED)
    if ending is not Ending.COMPLETE:
        return _unclear_with_fields(content or "", ParseStatus.TRUNCATED)
    if tool_calls:
        return _unclear_with_fields(content or "", ParseStatus.INVALID)
    return _read_whole(content)


def read_supplied(reply: str) -> Reading:
    """The reading for a reply the client supplied: there was no call, so no finish reason,
    and the text is all there is (checks 3 and 4 of the module docstring)."""
    return _read_whole(reply)


def _read_whole(content: str | None) -> Reading:
    if content is None or not content.strip():
        return failed_call_reading(ParseStatus.EMPTY)
    return parse_reply(content)


def failed_call_reading(status: ParseStatus, version: str = PARSER_VERSION) -> Reading:
    """A reading for a call that produced no usable content: verdict unclear, no fields,
    stamped with `version`: the reader of the format the call was asked in (a refused tool
    call is `tool-1`'s reading, not the text parser's).

    Raises ValueError for a status that describes a reply text (`ok`, `missing`, ...):
    those come only from `parse_reply`.
    """
    if status not in CALL_STATUSES:
        raise ValueError(f"parse status {status.value!r} describes a reply, not a call")
    return Reading(Verdict.UNCLEAR, status, None, None, version)


def _unclear_with_fields(content: str, status: ParseStatus) -> Reading:
    parsed = parse_reply(content)
    return Reading(
        verdict=Verdict.UNCLEAR,
        parse_status=status,
        back_translation=parsed.back_translation,
        issues=parsed.issues,
        parser_version=PARSER_VERSION,
    )
