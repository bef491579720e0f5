"""The MCP server through the SDK's own client, against real processes: streamable HTTP at
/mcp on `faithscreen serve` (keys on), and stdio from `faithscreen mcp`, both talking to a
server (--server) and to the embedded database and worker."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from tests.support.scripted_openai import ScriptedOpenAI, contract_reply
from tests.support.serve_process import FAITHSCREEN, ServeProcess, StartServe, provider_env

pytestmark = pytest.mark.one_database("postgres")

FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)
INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem mcp_e2e (n : ℕ) : n + 0 = n := by sorry"
MISMATCH = {"translator": contract_reply("MISMATCH"), "judge": contract_reply("MISMATCH", None)}
TOOLS = {"screen_pair", "get_screening", "read_reply", "explain_reason"}
Session = Callable[[Client], Awaitable[None]]


def keyed_serve(start_serve: StartServe, scripted: ScriptedOpenAI) -> tuple[ServeProcess, str]:
    serve = start_serve(provider_env(scripted.base_url, FAITHSCREEN_AUTH="on"))
    keys = FIRST_KEY.findall(serve.log.read_text())
    assert len(keys) == 1, serve.log.read_text()
    return serve, keys[0]


def make_key(serve: ServeProcess, admin: str, role: str, name: str) -> str:
    with serve.client() as http:
        made = http.post(
            "/v1/keys",
            json={"name": name, "role": role},
            headers={"Authorization": f"Bearer {admin}"},
        )
    assert made.status_code == 201, made.text
    return str(made.json()["key"])


def over_http(serve: ServeProcess, key: str, session: Session) -> None:
    async def run() -> None:
        headers = {"Authorization": f"Bearer {key}"}
        http = httpx2.AsyncClient(headers=headers, timeout=360)
        transport = streamable_http_client(f"{serve.base_url}/mcp", http_client=http)
        async with http, Client(transport) as client:
            await session(client)

    asyncio.run(run())


def over_stdio(env: dict[str, str], args: list[str], cwd: Path, session: Session) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    params = StdioServerParameters(
        command=FAITHSCREEN, args=["mcp", *args], env=base | env, cwd=cwd
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=360) as client:
            await session(client)

    asyncio.run(run())


def text_of(result: Any) -> str:
    return "".join(getattr(part, "text", "") for part in result.content)


async def check_every_tool(client: Client) -> None:
    """The four tools, a screening through the worker, and each kind of failure."""
    assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
    # The longest wait the tool allows: it answers as soon as the screening is done, so a
    # loaded machine's slow worker cannot turn "done" into "queued".
    pair = {"informal": INFORMAL, "formal": FORMAL, "wait_seconds": 300}
    screened = await client.call_tool("screen_pair", pair)
    assert not screened.is_error, text_of(screened)
    body = screened.structured_content
    assert body is not None and body["status"] == "done" and body["outcome"] == "passed"
    assert [r["role"] for r in body["roles"]] == ["translator", "judge"]
    assert all(r["parse_status"] == "ok" for r in body["roles"])
    assert body["back_translation"] and body["summary"].startswith("passed:")
    again = await client.call_tool("get_screening", {"id": body["id"]})
    assert again.structured_content is not None and again.structured_content["id"] == body["id"]
    missing = await client.call_tool("get_screening", {"id": "no-such-screening"})
    assert missing.is_error and "not_found: " in text_of(missing)
    bad = await client.call_tool("screen_pair", {"informal": "", "formal": FORMAL})
    assert bad.is_error and "validation_error: informal" in text_of(bad)
    too_long = await client.call_tool(
        "screen_pair", {"informal": INFORMAL, "formal": FORMAL, "wait_seconds": 301}
    )
    assert too_long.is_error and "validation_error: wait_seconds" in text_of(too_long)
    for failed in (missing, bad, too_long):
        assert "Traceback" not in text_of(failed)


async def check_offline_tools(client: Client) -> None:
    reading = await client.call_tool("read_reply", {"text": "VERDICT: MISMATCH\nISSUES: n\n"})
    assert reading.structured_content is not None
    assert (reading.structured_content["verdict"], reading.structured_content["parse_status"]) == (
        "mismatch",
        "ok",
    )
    meaning = await client.call_tool("explain_reason", {"code": "judge_mismatch"})
    assert meaning.structured_content is not None
    assert meaning.structured_content["outcome"] == "flagged"
    unknown = await client.call_tool("explain_reason", {"code": "nonsense"})
    assert unknown.is_error and "unknown_reason: " in text_of(unknown)


def test_mcp_over_http_with_a_submitter_key(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    serve, admin = keyed_serve(start_serve, scripted_openai)
    submitter = make_key(serve, admin, "submitter", "agent")

    async def session(client: Client) -> None:
        await check_every_tool(client)
        await check_offline_tools(client)

    over_http(serve, submitter, session)


def test_mcp_over_http_refuses_before_any_exchange(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI
) -> None:
    serve, admin = keyed_serve(start_serve, scripted_openai)
    scraper = make_key(serve, admin, "metrics", "scraper")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    with serve.client() as http:
        for headers, status in [
            ({}, 401),
            ({"Authorization": "Bearer fs_not-a-key"}, 401),
            ({"Authorization": f"Bearer {scraper}"}, 403),
        ]:
            refused = http.post("/mcp", json=initialize, headers=accept | headers)
            assert refused.status_code == status, refused.text
            assert set(refused.json()) == {"error"}, refused.text
            if status == 401:
                assert refused.headers["www-authenticate"].startswith("Bearer")
    with pytest.raises(Exception):  # noqa: B017 -- the SDK's own error for a refused session
        over_http(serve, "fs_not-a-key", check_offline_tools)


def test_mcp_over_stdio_to_a_server(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    serve, admin = keyed_serve(start_serve, scripted_openai)
    submitter = make_key(serve, admin, "submitter", "local-agent")

    async def session(client: Client) -> None:
        flagged = await client.call_tool(
            "screen_pair", {"informal": INFORMAL, "formal": FORMAL, "replies": MISMATCH}
        )
        body = flagged.structured_content
        assert body is not None and body["outcome"] == "flagged", text_of(flagged)
        assert "judge_mismatch" in body["reasons"]
        assert body["summary"].startswith("flagged (") and "judge_mismatch" in body["summary"]
        await check_offline_tools(client)

    args = ["--server", serve.base_url]
    over_stdio({"FAITHSCREEN_API_KEY": submitter}, args, tmp_path, session)
    refused: list[str] = []

    async def with_a_bad_key(client: Client) -> None:
        answer = await client.call_tool("get_screening", {"id": "x"})
        refused.append(
            text_of(answer) if answer.is_error else json.dumps(answer.structured_content)
        )

    over_stdio({}, [*args, "--api-key", "fs_not-a-key"], tmp_path, with_a_bad_key)
    assert refused and refused[0].startswith("Error executing tool get_screening: unauthorized: ")


def test_mcp_over_stdio_embedded(
    scripted_openai: ScriptedOpenAI, database_url: str, tmp_path: Path
) -> None:
    """No --server: the embedded database and worker screen the pair."""
    env = provider_env(scripted_openai.base_url, FAITHSCREEN_DATABASE_URL=database_url)
    over_stdio(env, [], tmp_path, check_every_tool)
