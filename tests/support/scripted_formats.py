"""The tool-call and JSON shapes of the OpenAI chat API, for the scripted provider
(scripted_openai.py uses this module).

- `ToolCallReply`, a step: a 200 completion whose message holds `tool_calls`, each with its
  `arguments` as a string sent exactly as given (so a test can send a key twice, a code
  fence or no JSON at all inside them), beside optional `content` and `refusal`, ending in
  `finish_reason` (by default `tool_calls`; OpenAI ends a forced call in `stop`).
  `raw_tool_calls` sends any value as `tool_calls` instead (a shape that is not a list).
- `arguments()` / `json_object()`: the reply object of a role as compact JSON text.
- `asked_format(request_json)`: which format a request asks for (`tool`, `json` or None
  for text and grammar) and whose fields (the translator's or the judge's), read from the
  request's `tools`/`tool_choice` or `response_format` as a server would.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

TOOL = "submit_review"


@dataclass(frozen=True)
class ToolCallReply:
    calls: tuple[tuple[str, str], ...] = ()  # (function name, arguments text)
    content: str | None = None
    finish_reason: str | None = "tool_calls"
    refusal: str | None = None
    raw_tool_calls: Any = None
    usage: dict[str, Any] | None = None


def arguments(
    verdict: str = "FAITHFUL",
    back_translation: str | None = "The formal statement says what the informal one says.",
    issues: str = "none",
) -> str:
    """The reply object: the translator's (with `back_translation`) or, when it is None,
    the judge's; as compact JSON, keys in the contract's order."""
    fields: dict[str, str] = {}
    if back_translation is not None:
        fields["back_translation"] = back_translation
    fields |= {"verdict": verdict, "issues": issues}
    return json.dumps(fields, ensure_ascii=False)


json_object = arguments


def submit(verdict: str = "FAITHFUL", *, translator: bool = True, **fields: Any) -> ToolCallReply:
    """One `submit_review` call with a well-formed object of the role's fields."""
    back = fields.pop("back_translation", "The formal statement says what the informal one says.")
    text = arguments(verdict, back if translator else None, **fields)
    return ToolCallReply(calls=((TOOL, text),))


def asked_format(request_json: Any) -> tuple[str | None, bool]:
    """(`tool`, `json` or None, whether the translator's fields are asked)."""
    if not isinstance(request_json, dict):
        return None, False
    tools = request_json.get("tools")
    if isinstance(tools, list) and tools:
        schema = tools[0].get("function", {}).get("parameters", {})
        return "tool", "back_translation" in schema.get("properties", {})
    response_format = request_json.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema", {})
        return "json", "back_translation" in schema.get("properties", {})
    return None, False


def tool_call_completion(
    step: ToolCallReply, model: str, number: int, usage: dict[str, Any]
) -> dict[str, Any]:
    """The chat completion body of `step`, as OpenAI writes one."""
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    calls = step.raw_tool_calls
    if calls is None:
        calls = [
            {
                "id": f"call_{number}_{index}",
                "type": "function",
                "function": {"name": name, "arguments": text},
            }
            for index, (name, text) in enumerate(step.calls)
        ]
    message["tool_calls"] = calls
    if step.refusal is not None:
        message["refusal"] = step.refusal
    choice = {"index": 0, "message": message, "finish_reason": step.finish_reason}
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": step.usage or usage,
    }
