"""The provider's reply is read only up to `max_response_bytes` (issue 32, item 2): the real
client over a real loopback socket stops reading at the cap, whether the body announces
its length (the scripted server) or streams without one (a chunked server that never
ends), and such a call fails "reply too large", its beginning kept, never read as a reply."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from app.llm import LLMClient
from app.settings import ProviderSettings
from tests.integration.test_llm_client import client_for, complete
from tests.support.scripted_openai import (
    HttpError,
    RawBody,
    Reply,
    ScriptedOpenAI,
    contract_reply,
)

CAP = 64 * 1024
# A FAITHFUL reply far over the cap: read whole, it would pass.
HUGE_FAITHFUL = contract_reply("FAITHFUL", back_translation="x" * (4 * 1024 * 1024))
SECRET = "sk-test-provider-secret-0123456789"


@pytest.fixture
def server() -> Any:
    with ScriptedOpenAI() as scripted:
        yield scripted


def completion_body(content: str) -> str:
    """A chat completion body, its length known to the byte."""
    choice = {"index": 0, "message": {"role": "assistant", "content": content}}
    choice["finish_reason"] = "stop"
    return json.dumps({"model": "m", "choices": [choice]}, separators=(",", ":"))


async def test_a_reply_over_the_cap_fails_after_reading_about_the_cap(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[Reply(HUGE_FAITHFUL)])
    async with client_for(server, max_response_bytes=CAP) as client:
        result = await complete(client)

    assert result.failed and result.error is not None
    assert result.error.startswith("reply too large: the body is longer than 65536 bytes")
    assert "MAX_RESPONSE_BYTES" in result.error
    assert result.content is None and result.finish_reason is None  # never read as a reply
    assert result.raw_body is not None and 0 < len(result.raw_body) <= CAP
    assert result.raw_body.startswith('{"id": "chatcmpl-scripted-1"')
    assert (result.http_status, result.attempts) == (200, 1)  # not retried
    assert len(server.requests) == 1


async def test_a_body_of_exactly_the_cap_is_read_and_one_byte_more_is_not(
    server: ScriptedOpenAI,
) -> None:
    body = completion_body(contract_reply("FAITHFUL"))
    exact = body + " " * (CAP - len(body))  # JSON allows trailing blanks
    server.script(steps=[RawBody(exact), RawBody(exact + " ")])
    async with client_for(server, max_response_bytes=CAP) as client:
        whole, over = await complete(client), await complete(client)

    assert not whole.failed and whole.content == contract_reply("FAITHFUL")
    assert whole.raw_body == exact
    assert over.failed and over.error is not None and over.error.startswith("reply too large")


def test_the_cap_is_per_provider_and_defaults_to_one_mebibyte() -> None:
    settings = ProviderSettings(base_url="http://127.0.0.1:9/v1", model="m")
    assert settings.max_response_bytes == 1024 * 1024


async def test_an_error_status_over_the_cap_keeps_its_status_with_the_body_cut(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[HttpError(400, body="e" * (2 * CAP))])
    async with client_for(server, max_response_bytes=CAP) as client:
        result = await complete(client)

    assert result.error is not None and result.error.startswith("HTTP 400: eee")
    assert "longer than 65536 bytes" in result.error
    assert result.raw_body is not None and len(result.raw_body) <= CAP


async def test_a_key_split_by_the_cut_is_not_kept_in_part(server: ScriptedOpenAI) -> None:
    # The key straddles the cap: its first part is in what was read, and redact() alone
    # cannot tell a key's first half from any other text.
    head = "a gateway echoes the request: Authorization: " + "y" * (CAP - 60)
    server.script(steps=[RawBody(f"{head}{SECRET} and more" + "z" * CAP)])
    async with client_for(server, max_response_bytes=CAP, api_key=SECRET) as client:
        result = await complete(client)

    assert result.error is not None and result.error.startswith("reply too large")
    assert result.raw_body is not None and result.raw_body.startswith("a gateway echoes")
    assert SECRET[:8] not in result.raw_body


# --- A body without Content-Length that never ends ------------------------------------


async def _endless(request: web.Request) -> web.StreamResponse:
    """A 200 that streams a FAITHFUL completion's beginning, then padding, forever."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    response.enable_chunked_encoding()
    await response.prepare(request)
    await response.write(b'{"choices":[{"message":{"content":"VERDICT: FAITHFUL')
    while True:  # ends when the client goes away (the write raises)
        await response.write(b" " * 16384)


@pytest.fixture
async def endless_url() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", _endless)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def test_a_streamed_body_without_length_is_cut_at_the_cap(endless_url: str) -> None:
    settings = ProviderSettings(
        base_url=endless_url,
        model="m",
        max_response_bytes=CAP,
        # Without the cap the read never ends: this deadline turns that into a failure.
        timeout_seconds=20,
        connect_timeout_seconds=10,
        max_retries=0,
    )
    async with LLMClient(settings, concurrency=1, sleep=asyncio.sleep) as client:
        result = await complete(client)

    assert result.error is not None and result.error.startswith("reply too large"), result.error
    assert result.raw_body is not None and len(result.raw_body) <= CAP
    assert result.raw_body.startswith('{"choices":[{"message":{"content":"VERDICT: FAITHFUL')
