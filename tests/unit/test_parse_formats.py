"""`faithscreen parse --format` and MCP `read_reply` read a reply by its format's reader,
never another and never leniently: a tool or json reply is the provider's whole response
body (the OpenAI chat shapes the scripted provider sends), read by tool-1 / json-1 for the
role's fields; a body that is no chat completion is refused, not guessed at."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server.mcpserver.exceptions import ToolError
from typer.testing import CliRunner

import app.cli.parse  # noqa: F401 -- registers the command on `cli`
from app.cli.root import cli
from app.contract import PARSER_VERSION
from app.mcp import server
from app.mcp.explain import UnreadableReply, read_reply
from app.vocabulary import ReplyFormat, Role
from tests.support.scripted_formats import (
    TOOL,
    ToolCallReply,
    arguments,
    submit,
    tool_call_completion,
)

USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def tool_body(step: ToolCallReply) -> str:
    return json.dumps(tool_call_completion(step, "m", 1, USAGE))


def content_body(content: str | None, finish_reason: str = "stop") -> str:
    message = {"role": "assistant", "content": content}
    choice = {"index": 0, "message": message, "finish_reason": finish_reason}
    return json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [choice]})


def run(args: list[str], stdin: str) -> tuple[int, list[dict[str, Any]], str]:
    result = CliRunner().invoke(cli, ["parse", *args], input=stdin.encode())
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    return result.exit_code, rows, result.stderr


def read(args: list[str], stdin: str) -> tuple[str, str, str]:
    code, rows, stderr = run(args, stdin)
    assert code == 0, stderr
    (row,) = rows
    return row["parse_status"], row["verdict"], row["parser_version"]


JUDGE_FAITHFUL_CALL = tool_body(submit(translator=False))


def test_a_tool_body_is_read_by_tool_1() -> None:
    assert read(["--format", "tool", "--role", "judge"], JUDGE_FAITHFUL_CALL) == (
        "ok",
        "faithful",
        "tool-1",
    )
    code, rows, _ = run(["--format", "tool", "--role", "translator"], tool_body(submit()))
    assert (code, rows[0]["back_translation"]) == (0, json.loads(arguments())["back_translation"])


@pytest.mark.parametrize(
    ("step", "status"),
    [
        # text beside the call that says otherwise
        (
            ToolCallReply(
                calls=((TOOL, arguments("FAITHFUL", None)),), content="VERDICT: MISMATCH"
            ),
            "conflicting",
        ),
        # two calls, even agreeing
        (ToolCallReply(calls=((TOOL, arguments("FAITHFUL", None)),) * 2), "conflicting"),
        # a key twice in the arguments
        (
            ToolCallReply(
                calls=((TOOL, '{"verdict":"MISMATCH","verdict":"FAITHFUL","issues":"x"}'),)
            ),
            "invalid",
        ),
        # the translator's field in a judge's object: an extra key
        (submit(), "invalid"),
        # cut off
        (
            ToolCallReply(calls=((TOOL, arguments("FAITHFUL", None)),), finish_reason="length"),
            "truncated",
        ),
        # no call at all, a text contract instead
        (ToolCallReply(content="ISSUES: none\nVERDICT: FAITHFUL\n"), "missing"),
        # the provider's refusal field
        (
            ToolCallReply(calls=((TOOL, arguments("FAITHFUL", None)),), refusal="I can't."),
            "refused",
        ),
    ],
)
def test_a_tool_body_the_reader_refuses_is_never_faithful(step: ToolCallReply, status: str) -> None:
    parsed_status, verdict, version = read(["--format", "tool", "--role", "judge"], tool_body(step))
    # Every reading, a refusal in the provider's own field included, is tool-1's.
    assert (parsed_status, verdict, version) == (status, "unclear", "tool-1")


def test_a_json_body_is_read_by_json_1_for_the_role_s_fields() -> None:
    translator = content_body(arguments())
    assert read(["--format", "json", "--role", "translator"], translator) == (
        "ok",
        "faithful",
        "json-1",
    )
    # The same object read for the judge has a key too many.
    assert read(["--format", "json", "--role", "judge"], translator)[:2] == ("invalid", "unclear")
    fenced = content_body("```json\n" + arguments("FAITHFUL", None) + "\n```")
    assert read(["--format", "json", "--role", "judge"], fenced)[:2] == ("invalid", "unclear")
    # A JSON reply beside an unasked tool call.
    both = tool_body(
        ToolCallReply(
            calls=((TOOL, "{}"),), content=arguments("FAITHFUL", None), finish_reason="stop"
        )
    )
    assert read(["--format", "json", "--role", "judge"], both)[:2] == ("invalid", "unclear")


@pytest.mark.parametrize("reply_format", ["tool", "json"])
def test_what_is_no_chat_completion_body_is_refused_not_read(reply_format: str) -> None:
    # The bare object (what a lenient reader would accept) is not the body the format reads.
    code, rows, stderr = run(
        ["--format", reply_format, "--role", "judge"], arguments("FAITHFUL", None)
    )
    assert (code, rows) == (2, [])
    assert f"not a {reply_format} reply's response body" in stderr
    code, _, stderr = run(["--format", reply_format], JUDGE_FAITHFUL_CALL)
    assert code == 2 and "--role" in stderr


def test_text_and_grammar_read_the_reply_text_with_the_contract_parser() -> None:
    contract = "ISSUES: none\nVERDICT: FAITHFUL\n"
    for reply_format in ("text", "grammar"):
        assert read(["--format", reply_format], contract) == ("ok", "faithful", PARSER_VERSION)
    # A tool body read as text is no contract reply: never a verdict.
    assert read(["--format", "text"], JUDGE_FAITHFUL_CALL)[:2] == ("missing", "unclear")


def test_jsonl_bodies_are_read_and_a_bad_line_is_named() -> None:
    lines = [
        json.dumps({"id": 1, "response": JUDGE_FAITHFUL_CALL}),
        json.dumps({"id": 2, "response": "VERDICT: FAITHFUL"}),
    ]
    code, rows, stderr = run(["--jsonl", "--format", "tool", "--role", "judge"], "\n".join(lines))
    assert code == 1
    assert [(r["id"], r["parse_status"], r["parser_version"]) for r in rows] == [
        (1, "ok", "tool-1")
    ]
    assert "line 2: not a tool reply's response body" in stderr


def test_mcp_read_reply_reads_each_format_by_its_reader() -> None:
    tool = read_reply(JUDGE_FAITHFUL_CALL, ReplyFormat.TOOL, Role.JUDGE)
    assert (tool.parse_status, tool.verdict, tool.parser_version) == ("ok", "faithful", "tool-1")
    json_reply = read_reply(content_body(arguments("MISMATCH", None)), ReplyFormat.JSON, Role.JUDGE)
    assert (json_reply.verdict, json_reply.parser_version) == ("mismatch", "json-1")
    assert read_reply(JUDGE_FAITHFUL_CALL).parse_status == "missing"  # text by default
    with pytest.raises(UnreadableReply):
        read_reply(arguments("FAITHFUL", None), ReplyFormat.JSON, Role.JUDGE)
    with pytest.raises(UnreadableReply):
        read_reply(JUDGE_FAITHFUL_CALL, ReplyFormat.TOOL)
    with pytest.raises(ToolError, match="unreadable_reply"):
        server.read_reply(arguments("FAITHFUL", None), ReplyFormat.TOOL, Role.JUDGE)
