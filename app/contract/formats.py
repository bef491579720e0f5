"""Which reader reads a reply, by the reply format it was asked in. Pure.

`text` and `grammar` replies are read by the contract parser (`contract-4`: the grammar
only helps a model write the contract; a tool call in such a reply makes it `invalid`);
`tool` by `tool-1`, `json` by `json-1` (structured.py). A re-score reads each stored
reply with the reader of the format it was asked in, never another: a tool reply is never
read as text.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from app.contract.call import read_call
from app.contract.grammar import GRAMMAR_VERSION
from app.contract.parser import PARSER_VERSION
from app.contract.provider_reply import ProviderReply
from app.contract.reading import Reading
from app.contract.structured import (
    JSON_READER_VERSION,
    TOOL_READER_VERSION,
    read_json_reply,
    read_tool_reply,
)
from app.vocabulary import ReplyFormat, Role

READER_VERSIONS: Mapping[ReplyFormat, str] = MappingProxyType(
    {
        ReplyFormat.TEXT: PARSER_VERSION,
        ReplyFormat.GRAMMAR: PARSER_VERSION,
        ReplyFormat.TOOL: TOOL_READER_VERSION,
        ReplyFormat.JSON: JSON_READER_VERSION,
    }
)


def read_reply(reply_format: ReplyFormat, role: Role, reply: ProviderReply) -> Reading:
    """A provider's reply read by the reader of the format it was asked in."""
    if reply_format is ReplyFormat.TOOL:
        return read_tool_reply(reply, role)
    if reply_format is ReplyFormat.JSON:
        return read_json_reply(reply, role)
    # text and grammar: the content, and only when the reply holds no tool call (a tool
    # call is another format's answer: `invalid`, contract-4; call.py).
    return read_call(reply.content, reply.finish_reason, reply.tool_calls)


def grammar_version(reply_format: ReplyFormat) -> str | None:
    """The grammar a reply was decoded by: `grammar-1` for `grammar`, else None."""
    return GRAMMAR_VERSION if reply_format is ReplyFormat.GRAMMAR else None
