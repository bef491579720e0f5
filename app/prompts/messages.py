"""The review prompts: what the translator and the judge are asked, for one pair.

Pure: a pair in, chat messages out; no database, no HTTP, no framework imports.
`PROMPT_VERSION` changes whenever any pair could be sent different text in the `text` (and
`grammar`) reply format; `prompt_version(format)` names the version of each format's text
(the `tool` and `json` formats ask for the reply in their own words). A golden hash in the
tests fails on any template edit until the version and the hash are both updated.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring_ascii
from typing import Literal, TypedDict

from app.prompts.fence import fence_code
from app.prompts.texts import template
from app.vocabulary import Pair, ReplyFormat, Role

PROMPT_VERSION = "prompts-2"
# The tool and json formats share prompts-2's rules and pair message; only the reply format
# they ask for differs (templates/*_contract_tool.txt, *_contract_json.txt).
_PROMPT_VERSIONS: Mapping[ReplyFormat, str] = {
    ReplyFormat.TEXT: PROMPT_VERSION,
    ReplyFormat.GRAMMAR: PROMPT_VERSION,
    ReplyFormat.TOOL: PROMPT_VERSION + "-tool-1",
    ReplyFormat.JSON: PROMPT_VERSION + "-json-1",
}
_TEXT = ReplyFormat.TEXT


class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


_SYSTEM_TEMPLATES: Mapping[Role, str] = {
    Role.TRANSLATOR: "translator_system.txt",
    Role.JUDGE: "judge_system.txt",
}
# The grammar format asks for the text contract: the grammar only helps a model write it.
_CONTRACT_SUFFIXES: Mapping[ReplyFormat, str] = {
    ReplyFormat.TEXT: "",
    ReplyFormat.GRAMMAR: "",
    ReplyFormat.TOOL: "_tool",
    ReplyFormat.JSON: "_json",
}


def prompt_version(reply_format: ReplyFormat) -> str:
    """The version of the prompts a reply in `reply_format` is asked with."""
    return _PROMPT_VERSIONS[reply_format]


def translator_messages(pair: Pair, reply_format: ReplyFormat = _TEXT) -> list[Message]:
    """Back-translate the Lean statement, compare, reply BACK-TRANSLATION/VERDICT/ISSUES."""
    return review_messages(Role.TRANSLATOR, pair, reply_format)


def judge_messages(pair: Pair, reply_format: ReplyFormat = _TEXT) -> list[Message]:
    """An independent comparison, replying VERDICT/ISSUES; it never sees the translator's."""
    return review_messages(Role.JUDGE, pair, reply_format)


def confirmation_messages(
    role: Role, pair: Pair, reply_format: ReplyFormat = _TEXT
) -> list[Message]:
    """A confirmation repeat: exactly the role's review messages, asked afresh.

    The earlier MISMATCH is deliberately not shown. Shown, it would anchor the model on
    its own answer (or, worded as a challenge, push it to recant), and the repeat would
    measure agreeableness instead of whether the mismatch is found again independently.
    """
    return review_messages(role, pair, reply_format)


def review_messages(role: Role, pair: Pair, reply_format: ReplyFormat = _TEXT) -> list[Message]:
    """The system prompt for `role` and a user message holding the fenced pair."""
    return [
        {"role": "system", "content": system_prompt(role, reply_format)},
        {"role": "user", "content": pair_request(pair)},
    ]


@functools.cache
def system_prompt(role: Role, reply_format: ReplyFormat = _TEXT) -> str:
    # The same for every pair, so providers can cache it; per-pair text goes in the user turn.
    # Built once per role: every call then hands out the same string, whose JSON text
    # `messages_sha256` keeps too.
    return template(_SYSTEM_TEMPLATES[role]).format(
        rules=template("review_rules.txt"), contract=reply_contract(role, reply_format)
    )


def reply_contract(role: Role, reply_format: ReplyFormat = _TEXT) -> str:
    """The reply format `role` is asked for (also repeated by a format retry)."""
    return template(f"{role.value}_contract{_CONTRACT_SUFFIXES[reply_format]}.txt")


def pair_request(pair: Pair) -> str:
    """The user message: the pair's three parts, each fenced as data (see `fence`)."""
    code = fence_code([pair.informal, pair.header, pair.formal])
    # str.format substitutes once: braces or `{code}` inside the statements stay literal.
    return template("pair.txt").format(
        code=code, informal=pair.informal, header=pair.header, formal=pair.formal
    )


def messages_sha256(messages: Sequence[Message]) -> str:
    """A hex SHA-256 of exactly what was sent (roles, contents and their order): of
    `json.dumps([{"role": ..., "content": ...}, ...], sort_keys=True, separators=(",", ":"))`,
    written out here piece by piece so that the system prompt, the same for every pair of
    a role, is escaped once, not on every call."""
    if not all(type(m["role"]) is str and type(m["content"]) is str for m in messages):
        canonical = [{"role": m["role"], "content": m["content"]} for m in messages]
        data = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(data.encode("ascii")).hexdigest()
    # ensure_ascii keeps lone surrogates hashable; the escaping is deterministic too.
    parts = [
        f'{{"content":{_json_text(m["content"], m["role"] == "system")},'
        f'"role":{encode_basestring_ascii(m["role"])}}}'
        for m in messages
    ]
    return hashlib.sha256(f"[{','.join(parts)}]".encode("ascii")).hexdigest()


def _json_text(text: str, repeated: bool) -> str:
    """`text` as json.dumps writes it (ASCII only); a repeated one from a small cache."""
    return _repeated_json_text(text) if repeated else encode_basestring_ascii(text)


@functools.lru_cache(maxsize=8)
def _repeated_json_text(text: str) -> str:
    return encode_basestring_ascii(text)
