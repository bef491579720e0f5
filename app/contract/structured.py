"""The readers of the `tool` and `json` reply formats (`tool-1`, `json-1`). Pure.

Each takes a whole provider reply (content, finish reason, tool calls) and the role, and
gives a `Reading`, in this order (docs/contract.md lists the rules; the reply object's own
rules are in `json_object.py`):

`tool-1`, a forced tool call `submit_review`:
1. finish reason a refusal -> `refused`; anything but a completion -> `truncated`, where a
   completion is a reason ENDINGS lists as one, or `tool_calls` (TOOL_ENDINGS).
2. no tool call: `empty` when the content is blank too, else `missing` (a text reply when a
   tool call was asked for is a format failure, re-asked; never read as text).
3. more than one tool call -> `conflicting`, even when they agree: the reply offers more
   than one answer and the reader does not choose.
4. content beside the tool call that is not blank -> `conflicting`: the reply says
   something outside its one answer, which may say otherwise (`VERDICT: MISMATCH` beside a
   FAITHFUL call), and prose is not read.
5. a call to another function, or with arguments that are not a string -> `invalid`.
6. the arguments read as a reply object (`json_object.read_object`).

`json-1`, a JSON-schema response format:
1. finish reason as for text (ENDINGS): `refused`, or `truncated` for anything but a
   completion (`tool_calls` included).
2. any tool call -> `invalid`: it was not asked for.
3. blank content -> `empty`.
4. the content read as a reply object (`json_object.read_object`): a code fence or prose
   around the object is `invalid`.

A refusal in the provider's `refusal` field is `refused` before any of this (the pipeline,
app/pipeline/review_records.py). A `truncated` or `refused` reading keeps no text fields:
a cut object cannot be read, and nothing is repaired.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.contract.call import ENDINGS, TOOL_ENDINGS, Ending, ending_of
from app.contract.json_object import read_object
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.contract.reply_schema import TOOL_NAME
from app.vocabulary import ParseStatus, Role, Verdict

TOOL_READER_VERSION = "tool-1"
JSON_READER_VERSION = "json-1"


def read_tool_reply(reply: ProviderReply, role: Role) -> Reading:
    """A reply to a forced `submit_review` call, read by `tool-1` (module docstring)."""
    ended = _ended(reply, TOOL_ENDINGS, TOOL_READER_VERSION)
    if ended is not None:
        return ended
    calls = reply.tool_calls
    if not calls:
        blank = not (reply.content or "").strip()
        return _unread(ParseStatus.EMPTY if blank else ParseStatus.MISSING, TOOL_READER_VERSION)
    if len(calls) > 1 or (reply.content or "").strip():
        return _unread(ParseStatus.CONFLICTING, TOOL_READER_VERSION)
    call = calls[0]
    if call.name != TOOL_NAME or call.arguments is None:
        return _unread(ParseStatus.INVALID, TOOL_READER_VERSION)
    return read_object(call.arguments, role, TOOL_READER_VERSION)


def read_json_reply(reply: ProviderReply, role: Role) -> Reading:
    """A reply under the JSON-schema response format, read by `json-1` (module docstring)."""
    ended = _ended(reply, ENDINGS, JSON_READER_VERSION)
    if ended is not None:
        return ended
    if reply.tool_calls:
        return _unread(ParseStatus.INVALID, JSON_READER_VERSION)
    if reply.content is None or not reply.content.strip():
        return _unread(ParseStatus.EMPTY, JSON_READER_VERSION)
    return read_object(reply.content, role, JSON_READER_VERSION)


def _ended(reply: ProviderReply, endings: Mapping[str, Ending], version: str) -> Reading | None:
    """The reading a finish reason alone decides (refused, truncated); None: complete."""
    ending = ending_of(reply.finish_reason, endings)
    if ending is Ending.REFUSED:
        return _unread(ParseStatus.REFUSED, version)
    if ending is not Ending.COMPLETE:
        return _unread(ParseStatus.TRUNCATED, version)
    return None


def _unread(status: ParseStatus, version: str) -> Reading:
    return Reading(Verdict.UNCLEAR, status, None, None, version)
