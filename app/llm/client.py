"""The LLM client: one pooled HTTP client per provider, bounded, paced and retrying.

`complete()` never raises for an ordinary failed call: it returns a `CallResult` whose
`error` says what went wrong. It raises only `ProviderBackoff`, when the provider asks
for a longer pause than one call should hold a slot for. It never touches the database.
A failed call's body and error text come back with credentials redacted (redaction.py).
"""

from __future__ import annotations

import asyncio
import json
import random
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpx2

from app.llm.body import Completion, MalformedBody, read_completion
from app.llm.call import CallResult
from app.llm.errors import ProviderBackoff
from app.llm.redaction import redact
from app.llm.retry import (
    MAX_WAIT_SECONDS,
    backoff_delay,
    is_retryable_status,
    retry_after_seconds,
)
from app.settings import ProviderSettings

Sleep = Callable[[float], Awaitable[object]]
_EXCERPT_CHARS = 300
# httpx2's connection pool walks every connection on each request and release (see the
# open pydantic/httpx2#1169), so one pool of 256 connections spends most of the client's
# CPU on bookkeeping. Pools of at most this many connections, each attempt sent on the
# least busy one, measured 2.4x the throughput at concurrency 256 (scripted server, 100 ms).
# 16 rather than 32: the walk is per connection, and pools of 16 cut the pool's CPU per
# request by a third (profile of the embedded worker, 300 pairs); 8 gained nothing more.
POOL_CONNECTIONS = 16
# The body as httpx2's `json=` encodes it.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One HTTP attempt: a readable completion, or a failure of some kind."""

    status: int | None = None
    raw_body: str | None = None
    completion: Completion | None = None
    kind: str | None = None  # "HTTP 500", "timeout", ...; None when it succeeded
    detail: str = ""
    retryable: bool = False
    retry_after: float | None = None

    def error(self, attempts: int) -> str | None:
        if self.kind is None:
            return None
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        return f"{self.kind}{tried}: {self.detail}"


class LLMClient:
    """Chat completions against one OpenAI-compatible provider.

    At most `concurrency` calls are in flight at once: a semaphore, and connection pools
    (of at most POOL_CONNECTIONS each) adding up to the same size. A 429 or a Retry-After
    pauses every call of this client, not only the one that got it. `sleep` and `rng`
    are seams for tests.
    """

    def __init__(
        self,
        settings: ProviderSettings,
        *,
        concurrency: int,
        transport: httpx2.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: Callable[[], float] = random.random,
    ) -> None:
        if not settings.base_url or not settings.model:
            raise ValueError("an LLM client needs the provider's base_url and model")
        self._settings = settings
        self._model = settings.model
        # What a failed call's body or error must never show.
        self._secrets = (settings.api_key.get_secret_value(),) if settings.api_key else ()
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._slots = asyncio.Semaphore(concurrency)
        self._pool_sizes = _pool_sizes(concurrency)
        verify = _ssl_context()
        self._pools = [_http_client(settings, size, transport, verify) for size in self._pool_sizes]
        # Requests go straight to each pool's transport (the one its client would pick for
        # this URL, a proxy from the environment included): the client's per-request work
        # (merging URL and headers, auth, redirects, cookies, a log record) was a quarter
        # of the CPU of a call, and none of it applies to one fixed POST.
        self._parsed_url = httpx2.URL(self._url)  # parsed once, not per request
        self._transports = [pool._transport_for_url(self._parsed_url) for pool in self._pools]
        self._headers = [
            *self._pools[0].headers.multi_items(),
            ("Content-Type", "application/json"),
        ]
        self._extensions: dict[str, Any] = {"timeout": self._pools[0].timeout.as_dict()}
        self._pool_load = [0] * len(self._pools)
        self._sleep = sleep
        self._rng = rng
        # A hard per-attempt deadline: the read timeout is per read, so a server that
        # trickles a byte now and then would otherwise hold the call forever.
        self._deadline = settings.timeout_seconds + settings.connect_timeout_seconds
        self._not_before = 0.0  # time.monotonic() before which no attempt starts
        self._next_rate_slot = 0.0  # requests_per_minute spacing

    @property
    def model(self) -> str:
        """The model this client asks for (the provider may report another)."""
        return self._model

    async def complete(
        self, messages: Sequence[Mapping[str, object]], *, max_tokens: int | None = None
    ) -> CallResult:
        """One chat completion, retried on transient failures; see the module docstring."""
        asked = self._settings.max_tokens if max_tokens is None else max_tokens
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(message) for message in messages],
            "max_tokens": asked,
            "temperature": self._settings.temperature,
        }
        async with self._slots:
            started = time.monotonic()
            attempt, attempts = await self._attempts(payload)
            latency_ms = round((time.monotonic() - started) * 1000)
        return _call_result(attempt, attempts, asked, latency_ms, self._secrets)

    async def aclose(self) -> None:
        for pool in self._pools:
            await pool.aclose()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _attempts(self, payload: dict[str, Any]) -> tuple[_Attempt, int]:
        """Attempt until success, a failure not worth retrying, or max_retries retries."""
        retry_at, number = 0.0, 0
        while True:
            number += 1
            await self._pace(retry_at)
            attempt = await self._attempt(payload)
            if not attempt.retryable:
                return attempt, number
            retry_at = self._retry_time(attempt, number)
            if number > self._settings.max_retries:
                return attempt, number

    async def _pace(self, retry_at: float) -> None:
        """Wait for this call's own retry time, the client-wide pause and the rate limit.

        Waits once, without re-checking afterwards: a pause extended meanwhile costs at
        most one more 429, and a single wait keeps an injected test `sleep` simple.
        """
        now = time.monotonic()
        paused = self._not_before - now
        if paused > MAX_WAIT_SECONDS:
            raise ProviderBackoff(paused)
        start = self._reserve_rate_slot(max(now, retry_at, self._not_before))
        if start > now:
            await self._sleep(start - now)

    def _reserve_rate_slot(self, start: float) -> float:
        """Space attempts 60/rpm seconds apart (no bursts: the simplest safe limiter)."""
        per_minute = self._settings.requests_per_minute
        if per_minute == 0:
            return start
        start = max(start, self._next_rate_slot)
        self._next_rate_slot = start + 60.0 / per_minute
        return start

    def _retry_time(self, attempt: _Attempt, retry: int) -> float:
        """When the next attempt may start; a 429 or Retry-After pauses the whole client."""
        delay = attempt.retry_after
        if delay is None:
            delay = backoff_delay(retry, self._rng)
        retry_at = time.monotonic() + delay
        if attempt.status == 429 or attempt.retry_after is not None:
            self._not_before = max(self._not_before, retry_at)
        if delay > MAX_WAIT_SECONDS:
            raise ProviderBackoff(delay)
        return retry_at

    async def _attempt(self, payload: dict[str, Any]) -> _Attempt:
        try:
            async with asyncio.timeout(self._deadline):
                response = await self._post(payload)
        except httpx2.TimeoutException as exc:
            return _failure("timeout", _describe(exc), retryable=True)
        except TimeoutError:
            return _failure("timeout", f"no full response within {self._deadline:g} s", True)
        except (httpx2.NetworkError, httpx2.RemoteProtocolError, OSError) as exc:
            return _failure("connection error", _describe(exc), retryable=True)
        except httpx2.HTTPError as exc:  # a local protocol error, an unsupported scheme...
            return _failure("protocol error", _describe(exc), retryable=False)
        return _read_response(response, self._secrets)

    async def _post(self, payload: dict[str, Any]) -> httpx2.Response:
        """POST on the pool with the most free connections. One always has one: this call
        holds a slot, so fewer than `concurrency` attempts are running elsewhere."""
        pools = range(len(self._pools))
        index = max(pools, key=lambda i: self._pool_sizes[i] - self._pool_load[i])
        request = httpx2.Request(
            "POST",
            self._parsed_url,
            headers=self._headers,
            content=_JSON_ENCODER.encode(payload).encode("utf-8"),
            extensions=self._extensions,
        )
        self._pool_load[index] += 1
        try:
            response = await self._transports[index].handle_async_request(request)
            try:
                await response.aread()
            finally:
                await response.aclose()
            return response
        finally:
            self._pool_load[index] -= 1


def _pool_sizes(concurrency: int) -> list[int]:
    """`concurrency` connections split as evenly as possible into pools of POOL_CONNECTIONS
    or fewer: 40 -> [20, 20]."""
    count = -(-concurrency // POOL_CONNECTIONS)
    return [concurrency // count + (i < concurrency % count) for i in range(count)]


def _ssl_context() -> ssl.SSLContext:
    """One context for all of a client's pools: each costs tens of ms to build (it loads
    the CA bundle), and a client at concurrency 128 has eight pools."""
    return httpx2.create_ssl_context()


def _http_client(
    settings: ProviderSettings,
    concurrency: int,
    transport: httpx2.AsyncBaseTransport | None,
    verify: ssl.SSLContext,
) -> httpx2.AsyncClient:
    headers = {"User-Agent": "faithscreen"}
    key = settings.api_key.get_secret_value() if settings.api_key else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    return httpx2.AsyncClient(
        transport=transport,
        verify=verify,
        headers=headers,
        limits=httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        timeout=httpx2.Timeout(settings.timeout_seconds, connect=settings.connect_timeout_seconds),
    )


def _read_response(response: httpx2.Response, secrets: tuple[str, ...]) -> _Attempt:
    status, text = response.status_code, response.text
    if not 200 <= status <= 299:
        retryable = is_retryable_status(status)
        wait = retry_after_seconds(response.headers) if retryable else None
        # Redacted whole before the excerpt is cut: a key across the cut would show half.
        text = redact(text, secrets)
        return _Attempt(status, text, None, f"HTTP {status}", _excerpt(text), retryable, wait)
    try:
        # A reply is kept as sent: its content is stored byte for byte, and read again.
        return _Attempt(status, text, read_completion(text))
    except MalformedBody as exc:
        # Not retried: the provider did answer, and a gateway that garbles a body does so
        # again; the pipeline records a provider_error and the pair goes to a person.
        text = redact(text, secrets)
        return _Attempt(status, text, None, "malformed body", f"{exc}; body: {_excerpt(text)}")


def _failure(kind: str, detail: str, retryable: bool) -> _Attempt:
    return _Attempt(kind=kind, detail=detail, retryable=retryable)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _excerpt(text: str) -> str:
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "..."


def _call_result(
    attempt: _Attempt, attempts: int, max_tokens: int, latency_ms: int, secrets: tuple[str, ...]
) -> CallResult:
    reply = attempt.completion
    error = attempt.error(attempts)
    return CallResult(
        content=reply.content if reply else None,
        finish_reason=reply.finish_reason if reply else None,
        refusal=reply.refusal if reply else None,
        usage=dict(reply.usage) if reply else {},
        model=reply.model if reply else None,
        http_status=attempt.status,
        latency_ms=latency_ms,
        raw_body=attempt.raw_body,
        # A transport error's text may quote the URL, or whatever a proxy said.
        error=redact(error, secrets) if error is not None else None,
        attempts=attempts,
        max_tokens=max_tokens,
    )
