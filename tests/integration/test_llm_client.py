"""The real LLM client over a real loopback socket, against the scripted server."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import aiohttp
import pytest
from pydantic import SecretStr

from app.llm import CallResult, LLMClient, ProviderBackoff
from app.settings import ProviderSettings
from tests.support.scripted_openai import (
    Hang,
    HttpError,
    RawBody,
    Reply,
    Reset,
    ScriptedOpenAI,
    Trickle,
)

POLL_DEADLINE_SECONDS = 120.0
MESSAGES = [{"role": "user", "content": "Is the formal statement faithful?"}]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


class Sleeps:
    """An injected `sleep` that records each requested wait instead of waiting; with
    `hold`, the waits stay blocked until `release()`."""

    def __init__(self, *, hold: bool = False) -> None:
        self.waits: list[float] = []
        self._released = asyncio.Event()
        if not hold:
            self._released.set()

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await self._released.wait()

    def release(self) -> None:
        self._released.set()


def settings_for(server: ScriptedOpenAI, **overrides: Any) -> ProviderSettings:
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "asked-model",
        # Generous: only the tests of a timeout set a short one (the scripted server's
        # answers, and the hangs of the concurrency tests, must not be cut off).
        "timeout_seconds": 60.0,
        "connect_timeout_seconds": 10.0,
    }
    return ProviderSettings(**(values | overrides))


def client_for(
    server: ScriptedOpenAI,
    *,
    concurrency: int = 4,
    sleep: Any = None,
    jitter: float = 1.0,
    **overrides: Any,
) -> LLMClient:
    return LLMClient(
        settings_for(server, **overrides),
        concurrency=concurrency,
        sleep=sleep or Sleeps(),
        rng=lambda: jitter,  # 1.0, the top of the jitter range: waits are the backoff cap
        # Time stands still for pacing, so each requested wait is exact, however long a
        # loaded machine takes between a 429 and the next call.
        monotonic=lambda: 1000.0,
    )


async def eventually(condition: Callable[[], bool]) -> None:
    """Poll until `condition` holds, failing after a deadline. Polling, because the server
    changes state in its own thread: there is no event to await."""
    async with asyncio.timeout(POLL_DEADLINE_SECONDS):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.01)


async def complete(
    client: LLMClient, text: str = "Is the formal statement faithful?"
) -> CallResult:
    return await client.complete([{"role": "user", "content": text}])


# --- A successful call ----------------------------------------------------------------------


async def test_success_reports_reply_usage_model_and_raw_body(server: ScriptedOpenAI) -> None:
    usage = {
        "prompt_tokens": 120,
        "completion_tokens": 40,
        "total_tokens": 160,
        "completion_tokens_details": {"reasoning_tokens": 25},
    }
    server.script(steps=[Reply("VERDICT: FAITHFUL\n", usage=usage, model="provider-model-v2")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)

    assert not result.failed and result.error is None
    assert result.content == "VERDICT: FAITHFUL\n"
    assert result.finish_reason == "stop"
    assert result.refusal is None
    assert result.model == "provider-model-v2"
    assert result.usage == {
        "prompt_tokens": 120,
        "completion_tokens": 40,
        "total_tokens": 160,
        "reasoning_tokens": 25,
    }
    assert (result.http_status, result.attempts, result.max_tokens) == (200, 1, 2048)
    assert result.raw_body is not None
    assert json.loads(result.raw_body)["choices"][0]["message"]["content"] == "VERDICT: FAITHFUL\n"
    assert result.latency_ms >= 0


async def test_request_carries_model_messages_max_tokens_and_temperature(
    server: ScriptedOpenAI,
) -> None:
    async with client_for(server, temperature=0.3, base_url=server.base_url + "/") as client:
        result = await client.complete(MESSAGES, max_tokens=4096)

    (request,) = server.requests
    assert request.path == "/v1/chat/completions"  # the trailing slash was dropped
    assert request.json == {
        "model": "asked-model",
        "messages": MESSAGES,
        "max_tokens": 4096,
        "temperature": 0.3,
    }
    assert result.max_tokens == 4096


@pytest.mark.parametrize(
    "content",
    [
        "BACK-TRANSLATION: x\r\nVERDICT: FAITHFUL\r\n",
        "VERDICT: FAITHFUL\rVERDICT: MISMATCH",
        "  ∀ n : ℕ, 2 ≤ n → n ∣ n !  \t\n\n",
        "trailing spaces   ",
        "",
        "\u2028\x85\x00 NUL and line separators",
    ],
)
async def test_content_is_kept_byte_for_byte(server: ScriptedOpenAI, content: str) -> None:
    server.script(steps=[Reply(content)])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert result.content == content


async def test_refusal_and_finish_reason_are_reported_not_judged(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reply(None, finish_reason="content_filter", refusal="I cannot help.")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert not result.failed
    assert (result.content, result.finish_reason) == (None, "content_filter")
    assert result.refusal == "I cannot help."


@pytest.mark.parametrize("key", [None, ""])
async def test_no_authorization_header_without_a_key(
    server: ScriptedOpenAI, key: str | None
) -> None:
    api_key = SecretStr(key) if key is not None else None
    async with client_for(server, api_key=api_key) as client:
        await client.complete(MESSAGES)
    assert "authorization" not in server.requests[0].headers


async def test_bearer_header_with_a_key(server: ScriptedOpenAI) -> None:
    async with client_for(server, api_key=SecretStr("sk-test-123")) as client:
        await client.complete(MESSAGES)
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-123"


async def test_a_redirect_is_a_failed_call_not_followed(server: ScriptedOpenAI) -> None:
    # Following it would send the prompt, and the key, wherever the Location points.
    elsewhere = server.base_url + "/chat/completions?moved=1"
    server.script(steps=[HttpError(307, headers={"Location": elsewhere}), Reply("not asked")])
    async with client_for(server, api_key=SecretStr("sk-test-123")) as client:
        result = await client.complete(MESSAGES)
    assert (result.http_status, result.attempts, result.content) == (307, 1, None)
    assert result.error is not None and result.error.startswith("HTTP 307: ")
    assert len(server.requests) == 1


def test_a_client_built_outside_an_event_loop_calls_and_closes_inside_one(
    server: ScriptedOpenAI,
) -> None:
    # The runtime builds its clients before the server's loop runs, and closes them in it.
    server.script(steps=[Reply("ok")])
    client = client_for(server)

    async def use() -> CallResult:
        async with client:
            return await client.complete(MESSAGES)

    result = asyncio.run(use())
    assert (result.content, result.error) == ("ok", None)


async def test_a_refused_connection_is_named_connect_error(server: ScriptedOpenAI) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = ProviderSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=0)
    async with LLMClient(settings, concurrency=1, sleep=Sleeps()) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and result.error.startswith("connection error: ConnectError")
    assert (result.http_status, result.raw_body, result.attempts) == (None, None, 1)


async def test_a_proxy_from_the_environment_carries_the_calls(
    server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The scripted server stands in for the proxy; the provider's host does not resolve, so
    # any HTTP answer came through the proxy (the scripted server knows no absolute-form
    # target: it says 404), where a direct call would fail with a ConnectError.
    monkeypatch.setenv("HTTP_PROXY", server.base_url.rsplit("/", 1)[0])
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    settings = ProviderSettings(base_url="http://provider.invalid/v1", model="m", max_retries=0)
    async with LLMClient(settings, concurrency=1, sleep=Sleeps()) as client:
        result = await client.complete(MESSAGES)
    assert result.http_status == 404, result.error


async def test_no_proxy_exempts_the_provider(
    server: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a proxy port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server.script(steps=[Reply("direct")])
    async with client_for(server, max_retries=0) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.error) == ("direct", None)


# --- Retries ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("jitter", "waits"), [(1.0, [0.5, 1.0]), (0.25, [0.125, 0.25])])
async def test_server_errors_are_retried_with_jittered_backoff(
    server: ScriptedOpenAI, jitter: float, waits: list[float]
) -> None:
    server.script(steps=[HttpError(500), HttpError(502), Reply("done")])
    sleeps = Sleeps()
    async with client_for(server, concurrency=1, sleep=sleeps, jitter=jitter) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts, result.error) == ("done", 3, None)
    assert sleeps.waits == pytest.approx(waits)


async def test_server_errors_exhaust_the_retries(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(500, body="overloaded")] * 4 + [Reply("too late")])
    sleeps = Sleeps()
    async with client_for(server, sleep=sleeps) as client:
        result = await client.complete(MESSAGES)
    assert result.failed
    assert result.error == "HTTP 500 after 4 attempts: overloaded"
    assert (result.http_status, result.raw_body, result.attempts) == (500, "overloaded", 4)
    assert (result.content, result.usage) == (None, {})
    assert len(server.requests) == 4
    assert sleeps.waits == pytest.approx([0.5, 1.0, 2.0])


async def test_max_retries_zero_makes_one_attempt(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(503), Reply("never asked")])
    async with client_for(server, max_retries=0) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and result.error.startswith("HTTP 503: ")
    assert len(server.requests) == 1


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503, 504, 599])
async def test_transient_statuses_are_retried(server: ScriptedOpenAI, status: int) -> None:
    server.script(steps=[HttpError(status), Reply("ok")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("ok", 2)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
async def test_other_client_errors_are_not_retried(server: ScriptedOpenAI, status: int) -> None:
    server.script(steps=[HttpError(status, body="bad request: max_tokens"), Reply("no")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert result.error == f"HTTP {status}: bad request: max_tokens"
    assert (result.attempts, result.http_status, len(server.requests)) == (1, status, 1)


async def test_long_error_bodies_are_cut_in_the_error_but_kept_raw(server: ScriptedOpenAI) -> None:
    body = "x" * 5000
    server.script(steps=[HttpError(400, body=body)])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and len(result.error) < 400
    assert result.raw_body == body


async def test_connection_reset_is_retried(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reset(), Reply("after reset")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("after reset", 2)


async def test_repeated_resets_fail_the_call(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reset()] * 2)
    async with client_for(server, max_retries=1) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None
    assert result.error.startswith("connection error after 2 attempts: ")
    assert (result.http_status, result.raw_body, result.attempts) == (None, None, 2)


async def test_unreachable_provider_is_a_failed_call() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = ProviderSettings(base_url=f"http://127.0.0.1:{port}/v1", model="m", max_retries=1)
    async with LLMClient(settings, concurrency=1, sleep=Sleeps()) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and result.error.startswith("connection error after 2")


async def test_read_timeout_is_retried_then_fails(server: ScriptedOpenAI) -> None:
    server.script(steps=[Hang(30), Hang(30)])
    async with client_for(server, timeout_seconds=0.3, max_retries=1) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and result.error.startswith("timeout after 2 attempts: ")
    assert "ReadTimeout" in result.error
    assert len(server.requests) == 2


async def test_read_timeout_then_success(server: ScriptedOpenAI) -> None:
    # One timeout cuts off the hung first try and must let the answered second one through:
    # 2 s, not 0.3 s, so a loaded machine that is slow to answer cannot time it out too.
    server.script(steps=[Hang(30), Reply("second try")])
    async with client_for(server, timeout_seconds=2) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("second try", 2)


async def test_a_trickling_server_is_cut_off_by_the_attempt_deadline(
    server: ScriptedOpenAI,
) -> None:
    # Every read gets a byte well within the read timeout (0.05 s apart against 2 s, so a
    # loaded machine that delays a byte cannot end it with a read timeout instead); only
    # the whole-attempt deadline (read + connect timeout) ends it.
    server.script(steps=[Trickle(interval=0.05)])
    short: dict[str, Any] = {"timeout_seconds": 2, "connect_timeout_seconds": 0.5}
    async with client_for(server, max_retries=0, **short) as client, asyncio.timeout(60):
        result = await client.complete(MESSAGES)
    assert result.error == "timeout: no full response within 2.5 s"


@pytest.mark.parametrize(
    "body",
    [
        "this is not JSON",
        "[1, 2, 3]",
        '{"id": "x", "object": "chat.completion"}',
        '{"choices": []}',
        '{"choices": [{"index": 0}]}',
        '{"choices": [{"message": {"content": 5}}]}',
        '{"choices": [{"message": {"content": "x"}, "finish_reason": 7}]}',
        '{"error": {"message": "upstream failed"}}',
    ],
)
async def test_malformed_bodies_are_failed_calls_not_retried(
    server: ScriptedOpenAI, body: str
) -> None:
    server.script(steps=[RawBody(body), Reply("not asked")])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert result.error is not None and result.error.startswith("malformed body: ")
    assert (result.http_status, result.raw_body, result.attempts) == (200, body, 1)
    assert result.content is None


# --- Retry-After and the client-wide pause ----------------------------------------------------


async def test_retry_after_seconds_is_honoured(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "7"}), Reply("ok")])
    sleeps = Sleeps()
    async with client_for(server, sleep=sleeps) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("ok", 2)
    assert sleeps.waits == [7.0]


async def test_retry_after_http_date_is_honoured(server: ScriptedOpenAI) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    server.script(steps=[HttpError(503, headers={"Retry-After": when}), Reply("ok")])
    sleeps = Sleeps()
    async with client_for(server, sleep=sleeps) as client:
        result = await client.complete(MESSAGES)
    assert result.content == "ok"
    assert len(sleeps.waits) == 1 and 15 < sleeps.waits[0] <= 20


async def test_a_real_retry_after_wait_over_the_socket(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "1"}), Reply("ok")])
    settings = settings_for(server)
    async with LLMClient(settings, concurrency=1) as client:  # the real asyncio.sleep
        result = await client.complete(MESSAGES)
    first, second = server.requests
    assert (result.content, result.attempts) == ("ok", 2)
    # A lower bound only (a wait cannot end early), never a speed assertion.
    assert second.time - first.time >= 0.9


async def test_a_long_retry_after_raises_provider_backoff(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "120"})])
    async with client_for(server, concurrency=1) as client:
        with pytest.raises(ProviderBackoff) as raised:
            await client.complete(MESSAGES)
        assert raised.value.retry_after == 120
        # The slot was given back (concurrency 1 would block here otherwise), and the
        # paused client backs off at once without calling the provider again.
        async with asyncio.timeout(60):
            with pytest.raises(ProviderBackoff) as again:
                await client.complete(MESSAGES)
    assert again.value.retry_after == 120
    assert len(server.requests) == 1


async def test_a_429_pauses_the_other_calls_of_the_client(server: ScriptedOpenAI) -> None:
    server.script("first", steps=[HttpError(429, headers={"Retry-After": "5"})])
    sleeps = Sleeps(hold=True)
    async with client_for(server, sleep=sleeps) as client:
        first = asyncio.create_task(complete(client, "first"))
        await eventually(lambda: len(sleeps.waits) == 1)
        second = asyncio.create_task(complete(client, "second"))
        await eventually(lambda: len(sleeps.waits) == 2)
        assert len(server.requests) == 1  # the second call waits without asking
        assert sleeps.waits == [5.0, 5.0]
        sleeps.release()
        results = await asyncio.gather(first, second)
    assert [r.failed for r in results] == [False, False]
    assert len(server.requests) == 3


async def test_a_500_does_not_pause_the_other_calls(server: ScriptedOpenAI) -> None:
    server.script("first", steps=[HttpError(500)])
    sleeps = Sleeps(hold=True)
    async with client_for(server, sleep=sleeps) as client:
        first = asyncio.create_task(complete(client, "first"))
        await eventually(lambda: len(sleeps.waits) == 1)
        second = await complete(client, "second")
        sleeps.release()
        assert not (await first).failed
    assert not second.failed


async def test_requests_per_minute_spaces_the_calls(server: ScriptedOpenAI) -> None:
    sleeps = Sleeps()
    async with client_for(server, sleep=sleeps, requests_per_minute=6) as client:
        for _ in range(3):
            await client.complete(MESSAGES)
    assert sleeps.waits == [10.0, 20.0]


# --- Concurrency --------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [2, 40])
async def test_in_flight_calls_never_exceed_the_concurrency(
    server: ScriptedOpenAI, concurrency: int
) -> None:
    calls = 3 * concurrency
    server.script(steps=[Reply("ok", delay=0.05)] * calls)
    async with client_for(server, concurrency=concurrency) as client:
        results = await asyncio.gather(*(client.complete(MESSAGES) for _ in range(calls)))
    assert all(r.content == "ok" for r in results)
    assert len(server.requests) == calls
    assert server.max_in_flight <= concurrency


async def test_the_semaphore_bounds_calls_even_with_a_larger_connector(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[Reply("ok", delay=0.05)] * 6)
    connector = aiohttp.TCPConnector(limit=100)
    settings = settings_for(server)
    async with LLMClient(settings, concurrency=2, connector=connector) as client:
        results = await asyncio.gather(*(client.complete(MESSAGES) for _ in range(6)))
    assert all(r.content == "ok" for r in results)
    assert server.max_in_flight <= 2


@pytest.mark.parametrize("concurrency", [6, 40, 65])
async def test_calls_run_in_parallel_up_to_the_concurrency(
    server: ScriptedOpenAI, concurrency: int
) -> None:
    server.script(steps=[Hang(30)] * concurrency)
    async with client_for(server, concurrency=concurrency) as client:
        calls = [asyncio.create_task(client.complete(MESSAGES)) for _ in range(concurrency)]
        try:
            await eventually(lambda: server.in_flight == concurrency)
        finally:
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)
    assert server.max_in_flight == concurrency
