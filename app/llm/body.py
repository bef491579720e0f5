"""Reading an OpenAI-compatible chat completion body, strictly.

Anything that is not the expected shape raises `MalformedBody`; the client turns that
into a failed call instead of guessing what the provider meant. That includes a key named
twice in one object, anywhere in the body: JSON leaves such a body's meaning open (Python
keeps the last value, other readers the first or refuse it), so two `choices` could say
MISMATCH to one reader and FAITHFUL to another. Anywhere, not only on the path to the
content: it is simpler to state and to check, and no real server writes a duplicate key
(each serialises a map or a typed object), so refusing one costs nothing real.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from app.contract.provider_reply import ToolCall

# How much of a duplicated key a MalformedBody message quotes: the key came from the
# provider and may be of any length; the whole body is kept beside the error anyway.
_KEY_SHOWN = 60


class MalformedBody(ValueError):
    """A 200 response whose body is not a chat completion we can read."""


@dataclass(frozen=True, slots=True)
class Completion:
    content: str | None
    finish_reason: str | None
    refusal: str | None
    model: str | None
    usage: dict[str, int]
    tool_calls: tuple[ToolCall, ...] = ()


def read_completion(text: str) -> Completion:
    """Read `choices[0]` of a chat completion body; content is kept byte-for-byte."""
    message, choice, body = _first_message(_json_object(text))
    return Completion(
        content=_optional_str(message, "content", "choices[0].message.content"),
        finish_reason=_optional_str(choice, "finish_reason", "choices[0].finish_reason"),
        refusal=_optional_str(message, "refusal", "choices[0].message.refusal"),
        model=_optional_str(body, "model", "model"),
        usage=usage_from_body(body),
        tool_calls=tool_calls_of(message),
    )


def tool_calls_of(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    """`message.tool_calls` as the tool reader needs them. Never raises: a shape that is
    not a list of function calls is the model's (or server's) format fault, which the
    `tool` reader finds `invalid`, not a body we cannot read; a text or JSON reply is not
    read for tool calls at all, beyond `json-1` refusing any."""
    calls = message.get("tool_calls")
    if calls is None:
        return ()
    if not isinstance(calls, list):
        return (ToolCall(None, None),)
    return tuple(_tool_call(call) for call in calls)


def _tool_call(call: object) -> ToolCall:
    if not isinstance(call, dict) or call.get("type", "function") != "function":
        return ToolCall(None, None)
    function = _dict(call.get("function"))
    name, arguments = function.get("name"), function.get("arguments")
    return ToolCall(
        name if isinstance(name, str) else None,
        arguments if isinstance(arguments, str) else None,
    )


def usage_from_body(body: dict[str, Any]) -> dict[str, int]:
    """Token counts the provider reported; absent or non-integer counts are left out."""
    usage = _dict(body.get("usage"))
    details = _dict(usage.get("completion_tokens_details"))
    counts = {
        "prompt_tokens": usage.get("prompt_tokens"),
        "completion_tokens": usage.get("completion_tokens"),
        "total_tokens": usage.get("total_tokens"),
        # Some OpenAI-compatible servers report reasoning tokens at the top level.
        "reasoning_tokens": details.get("reasoning_tokens", usage.get("reasoning_tokens")),
    }
    return {name: n for name, n in counts.items() if _is_count(n)}


def _json_object(text: str) -> dict[str, Any]:
    try:
        # strict=False: a raw control character inside a string (a bare CR, say) is kept
        # as sent, so the contract parser sees the reply as it was, not a lost reply.
        body = json.loads(text, strict=False, object_pairs_hook=_unique_keys)
    except MalformedBody:
        raise
    except ValueError as exc:
        raise MalformedBody(f"not JSON ({exc})") from None
    except RecursionError:  # arrays nested deeper than the interpreter's stack
        raise MalformedBody("not JSON we read: nested too deeply") from None
    if not isinstance(body, dict):
        raise MalformedBody(f"expected a JSON object, got {type(body).__name__}")
    return body


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's members as a dict; raises MalformedBody when a key comes twice (after
    JSON unescaping: "choices" and "\\u0063hoices" are one key)."""
    body = dict(pairs)
    if len(body) != len(pairs):
        twice = _first_repeated(key for key, _ in pairs)
        raise MalformedBody(f"duplicate key {twice[:_KEY_SHOWN]!r} in a JSON object")
    return body


def _first_repeated(keys: Iterable[str]) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    raise ValueError("no key is repeated")


def _first_message(body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedBody("no choices")
    choice = choices[0]
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise MalformedBody("choices[0] has no message object")
    return choice["message"], choice, body


def _optional_str(obj: dict[str, Any], key: str, where: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedBody(f"{where} is {type(value).__name__}, not a string or null")
    return value


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_count(value: object) -> TypeGuard[int]:
    # bool is an int subclass; `true` is not a token count.
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
