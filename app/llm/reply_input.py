"""A reply given by a person (to `faithscreen parse` or MCP `read_reply`), read by the reader
of the format it was asked in, exactly as the pipeline reads a call. No I/O.

- `text` and `grammar`: the reply text (the message content), read by the contract parser;
  a grammar only helps a model write the contract, so it is read the same way.
- `tool` and `json`: the provider's whole response body (a chat completion, as a review's
  raw body or the raw endpoint holds it), since the model's answer is in its tool calls
  (`tool`) and a JSON reply must hold none (`json-1`). The body is read strictly
  (app/llm/body.py: a body that does not read raises `MalformedBody`, never guessed at);
  a refusal in the `refusal` field is `refused`, as in the pipeline; then `tool-1` or
  `json-1` reads content, finish reason and tool calls for `role`'s fields.
"""

from __future__ import annotations

from app.contract import failed_call_reading, parse_reply
from app.contract.formats import READER_VERSIONS, read_reply
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.llm.body import MalformedBody, read_completion
from app.vocabulary import ParseStatus, ReplyFormat, Role

STRUCTURED = frozenset({ReplyFormat.TOOL, ReplyFormat.JSON})

__all__ = ["STRUCTURED", "MalformedBody", "MissingRole", "read_given_reply"]


class MissingRole(ValueError):
    """A tool or JSON reply given without the role whose fields it must hold."""


def read_given_reply(reply_format: ReplyFormat, role: Role | None, given: str) -> Reading:
    """`given` read as a reply in `reply_format` (see the module docstring). Raises
    MalformedBody for a tool or JSON body that is not a chat completion, MissingRole when
    such a reply comes without a role."""
    if reply_format not in STRUCTURED:
        return parse_reply(given)
    if role is None:
        raise MissingRole(
            f"a {reply_format.value} reply is read for a role's fields: "
            "give the role (translator or judge)"
        )
    completion = read_completion(given)
    if completion.refusal:
        return failed_call_reading(ParseStatus.REFUSED, READER_VERSIONS[reply_format])
    reply = ProviderReply(completion.content, completion.finish_reason, completion.tool_calls)
    return read_reply(reply_format, role, reply)
