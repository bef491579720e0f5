"""Versions of what the tool and json formats send and read, and the pieces between the
provider's body and the readers.

- The prompts of each format are hashed: a text change fails until its version is bumped.
- Each reader reads a fixed corpus of hostile replies; the readings are hashed: a change in
  how any is read fails until the reader's version (tool-1, json-1) is bumped. Never edit
  a recorded digest: add a version.
- The body reader hands the readers `tool_calls` byte for byte, and a shape that is not a
  function call as one the readers find invalid; the request carries the role's schema."""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest

from app.contract.call import TOOL_ENDINGS
from app.contract.provider_reply import ProviderReply, ToolCall
from app.contract.structured import (
    JSON_READER_VERSION,
    TOOL_READER_VERSION,
    read_json_reply,
    read_tool_reply,
)
from app.llm.body import read_completion
from app.llm.constraint import json_request, reply_constraint, tool_request
from app.prompts import format_retry_messages, judge_messages, messages_sha256, prompt_version
from app.prompts import translator_messages as translator
from app.prompts.retry import STRUCTURED_RETRY_NOTES
from app.settings import ProviderSettings
from app.vocabulary import FORMAT_RETRY_STATUSES, Pair, ParseStatus, ReplyFormat, Role

PAIR = Pair("For every natural number n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n := by sorry")

PROMPT_GOLDEN = {
    "prompts-2-tool-1": "21a28c6c78aa106632cfa273e76c7c97f78048a8d8166f2454522652c69930a0",
    "prompts-2-json-1": "f27db67939639cfea7c57c9377294f7c65f5164c134ef320e36dad57f26378c1",
}


@pytest.mark.parametrize("reply_format", [ReplyFormat.TOOL, ReplyFormat.JSON])
def test_prompt_text_cannot_change_without_a_new_version(reply_format: ReplyFormat) -> None:
    rendered = [translator(PAIR, reply_format), judge_messages(PAIR, reply_format)]
    for status in sorted(FORMAT_RETRY_STATUSES):
        for original in list(rendered[:2]):
            rendered.append(format_retry_messages(original, "{}", status))
    digest = hashlib.sha256("".join(map(messages_sha256, rendered)).encode()).hexdigest()
    version = prompt_version(reply_format)
    assert (version, digest) == (version, PROMPT_GOLDEN[version])


def test_text_and_grammar_keep_prompts_2_and_structured_retries_quote_nothing() -> None:
    assert prompt_version(ReplyFormat.TEXT) == prompt_version(ReplyFormat.GRAMMAR) == "prompts-2"
    assert translator(PAIR, ReplyFormat.GRAMMAR) == translator(PAIR)
    assert set(STRUCTURED_RETRY_NOTES) == FORMAT_RETRY_STATUSES
    tool = translator(PAIR, ReplyFormat.TOOL)
    retried = format_retry_messages(tool, "VERDICT: FAITHFUL secret", ParseStatus.MISSING)
    assert "secret" not in retried[1]["content"]
    assert "submit_review exactly once" in retried[1]["content"]
    assert retried[0] == tool[0]


# --- the readers' corpus ------------------------------------------------------------------

OBJECTS = [
    '{"verdict": "FAITHFUL", "issues": "none"}',
    '{"back_translation": "x", "verdict": "MISMATCH", "issues": "y"}',
    '{"verdict": "faithful", "issues": "none"}',
    '{"verdict": "UNCLEAR", "issues": "none", "verdict": "UNCLEAR"}',
    '{"verdict": "FAITHFUL"}',
    '```json\n{"verdict": "FAITHFUL", "issues": "none"}\n```',
    '{"verdict": "FAITHFUL", "issues": "none", "extra": "1"}',
    "VERDICT: FAITHFUL\nISSUES: none",
    "",
    None,
]
CONTENTS = [None, "", " ", "VERDICT: MISMATCH", '{"verdict": "FAITHFUL", "issues": "none"}']
NAMES = ["submit_review", "Submit_Review", None]
REASONS = [*sorted(TOOL_ENDINGS), None, "", "TOOL_CALLS", "function_call", "abort"]

READER_DIGESTS = {
    "tool-1": "c65cb43592906020f368cd82aa2fd1b50ce04a79417dd5cb2fb42a33d33e398c",
    "json-1": "5665969c41eba1c04503625f1cabc77c5efcda725552187281923ac0866ad0dd",
}


def corpus() -> list[ProviderReply]:
    replies = []
    for arguments, content, name in itertools.product(OBJECTS, CONTENTS, NAMES):
        calls = () if arguments is None else (ToolCall(name, arguments),)
        replies.append(ProviderReply(content, "stop", calls))
        replies.append(ProviderReply(content, "tool_calls", calls * 2))
    for reason in REASONS:
        replies.append(ProviderReply(OBJECTS[0], reason, (ToolCall("submit_review", OBJECTS[0]),)))
        replies.append(ProviderReply(OBJECTS[0], reason))
    return replies


@pytest.mark.parametrize(
    ("version", "read"),
    [(TOOL_READER_VERSION, read_tool_reply), (JSON_READER_VERSION, read_json_reply)],
)
def test_a_reader_cannot_change_without_a_new_version(version: str, read: object) -> None:
    assert callable(read)
    readings = [
        [r.verdict.value, r.parse_status.value, r.back_translation, r.issues, r.parser_version]
        for reply in corpus()
        for role in Role
        for r in [read(reply, role)]
    ]
    digest = hashlib.sha256(json.dumps(readings).encode()).hexdigest()
    assert (version, digest) == (version, READER_DIGESTS[version])


# --- from the body to the readers, and the request -----------------------------------------


def body(message: dict[str, object], finish: str = "tool_calls") -> str:
    return json.dumps({"choices": [{"message": message, "finish_reason": finish}]})


def test_tool_call_arguments_reach_the_reader_byte_for_byte() -> None:
    arguments = '{ "verdict":"FAITHFUL" , "issues" : "a\\u2013b",\n"verdict":"MISMATCH"}'
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "submit_review", "arguments": arguments},
    }
    completion = read_completion(body({"content": None, "tool_calls": [call]}))
    assert completion.tool_calls == (ToolCall("submit_review", arguments),)
    assert completion.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    "tool_calls",
    [
        {"function": {"name": "submit_review", "arguments": "{}"}},  # not a list
        [{"type": "code_interpreter", "function": {"name": "submit_review", "arguments": "{}"}}],
        [{"type": "function", "function": {"name": "submit_review", "arguments": {"a": 1}}}],
        ["submit_review"],
    ],
)
def test_a_tool_call_shape_the_reader_cannot_read_is_invalid(tool_calls: object) -> None:
    completion = read_completion(body({"content": None, "tool_calls": tool_calls}))
    reply = ProviderReply(None, "tool_calls", completion.tool_calls)
    assert read_tool_reply(reply, Role.JUDGE).parse_status is ParseStatus.INVALID
    assert (
        read_json_reply(ProviderReply("{}", "stop", completion.tool_calls), Role.JUDGE).parse_status
        is ParseStatus.INVALID
    )


def test_no_tool_calls_key_and_null_are_no_calls() -> None:
    assert read_completion(body({"content": "x"})).tool_calls == ()
    assert read_completion(body({"content": "x", "tool_calls": None})).tool_calls == ()


def test_the_request_forces_the_one_function_with_the_role_s_schema() -> None:
    tool = tool_request(Role.JUDGE)
    # One function offered, and the call required: that function is forced.
    assert tool["tool_choice"] == "required"
    assert [t["function"]["name"] for t in tool["tools"]] == ["submit_review"]
    assert tool["parallel_tool_calls"] is False
    assert json.loads(json.dumps(tool))["tools"][0]["function"]["parameters"]["required"] == [
        "verdict",
        "issues",
    ]
    asked = json_request(Role.TRANSLATOR)["response_format"]
    assert isinstance(asked, dict) and asked["json_schema"]["strict"] is True
    assert asked["json_schema"]["schema"]["required"] == ["back_translation", "verdict", "issues"]
    settings = ProviderSettings(base_url="http://x", model="m", reply_format="tool")
    with pytest.raises(ValueError, match="needs the role"):
        reply_constraint(settings, None)
    assert reply_constraint(settings.model_copy(update={"reply_format": "text"}), None) == {}
