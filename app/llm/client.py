"""The LLM client: one pooled HTTP session per provider, bounded, paced and retrying.

`complete()` never raises for an ordinary failed call: it returns a `CallResult` whose
`error` says what went wrong. It raises only `ProviderBackoff`, when the provider asks
for a longer pause than one call should hold a slot for. It never touches the database.
A failed call's body and error text come back with credentials redacted (redaction.py).
A response body is read only up to the provider's `max_response_bytes` (capped_body.py).

The HTTP client is aiohttp: measured in a bare asyncio loop against the scripted provider
(100 ms latency, 1.5 KB prompts) it spends about a quarter of httpx2's CPU per call, and
its connection pool does not slow down as it grows (httpx2's walks every connection on
each request and release), so one connector of `concurrency` connections is enough.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

import aiohttp

from app.llm.body import Completion, MalformedBody, read_completion
from app.llm.call import CallResult
from app.llm.capped_body import TOO_LARGE, read_capped, redact_cut, too_large_detail
from app.llm.constraint import reply_constraint
from app.llm.errors import ProviderBackoff
from app.llm.gate import OPEN_GATE, CallGate, estimated_tokens, used_tokens
from app.llm.redaction import redact
from app.llm.retry import (
    MAX_WAIT_SECONDS,
    backoff_delay,
    capped_wait,
    is_retryable_status,
    retry_after_seconds,
)
from app.process_metrics import IN_FLIGHT, REGISTRY, WAITS, record_attempt
from app.settings import ProviderSettings
from app.vocabulary import Role

Sleep = Callable[[float], Awaitable[object]]
_EXCERPT_CHARS = 300
# Compact JSON, non-ASCII as UTF-8 rather than escapes: what the provider reads as sent.
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_JSON_HEADERS = {"Content-Type": "application/json"}


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


@dataclass(frozen=True, slots=True)
class _Response:
    """What an attempt keeps of a response: read whole, or up to the cap (`cut_at`, None
    when read whole), its connection already released."""

    status: int
    headers: Mapping[str, str]
    text: str
    cut_at: int | None = None


class LLMClient:
    """Chat completions against one OpenAI-compatible provider.

    At most `concurrency` calls are in flight at once: a semaphore, and one connection
    pool of the same size. A 429 or a Retry-After pauses every call of this client, not
    only the one that got it. `sleep`, `rng` and `monotonic` (the clock that retry times,
    pauses and the rate limit are measured on; latency stays on the real one) are seams
    for tests; so is `connector` (the session owns it and closes it). The session is opened
    on the first call, in the event loop that makes it, and closed by `aclose()`. `role`
    is whose replies it asks for: a provider set to the grammar reply format needs it, to
    send that role's grammar with every call (constraint.py). `gate` admits each attempt
    within the provider's budget shared by every process (gate.py, app/budgets); it then
    spaces the requests itself, instead of this client's `requests_per_minute`.
    """

    def __init__(
        self,
        settings: ProviderSettings,
        *,
        concurrency: int,
        role: Role | None = None,
        connector: aiohttp.BaseConnector | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        monotonic: Callable[[], float] = time.monotonic,
        gate: CallGate = OPEN_GATE,
    ) -> None:
        if not settings.base_url or not settings.model:
            raise ValueError("an LLM client needs the provider's base_url and model")
        self._settings = settings
        self._model = settings.model
        # The same for every call of this client: first and format re-asks alike.
        self._constraint = reply_constraint(settings, role)
        self._role_label = role.value if role is not None else "unknown"  # process metrics
        # What a failed call's body or error must never show.
        self._secrets = (settings.api_key.get_secret_value(),) if settings.api_key else ()
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._proxy = _environment_proxy(self._url)
        self._concurrency = concurrency
        self._slots = asyncio.Semaphore(concurrency)
        self._connector = connector
        self._session: aiohttp.ClientSession | None = None
        self._sleep = sleep
        self._rng = rng
        self._monotonic = monotonic
        self._gate = gate
        # A hard per-attempt deadline: the read timeout is per read, so a server that
        # trickles a byte now and then would otherwise hold the call forever.
        self._deadline = settings.timeout_seconds + settings.connect_timeout_seconds
        self._not_before = 0.0  # self._monotonic() before which no attempt starts
        self._pause_asked: float | None = None  # the wait asked for, when the cap cut it
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
            **self._constraint,
        }
        tokens = estimated_tokens(messages, asked)
        async with self._slots:
            started = time.monotonic()
            attempt, attempts = await self._attempts(payload, tokens)
            latency_ms = round((time.monotonic() - started) * 1000)
        return _call_result(attempt, attempts, asked, latency_ms, self._secrets)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        elif self._connector is not None:
            await self._connector.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _attempts(self, payload: dict[str, Any], tokens: int) -> tuple[_Attempt, int]:
        """Attempt until success, a failure not worth retrying, or max_retries retries."""
        body = _JSON_ENCODER.encode(payload).encode("utf-8")  # the same bytes every attempt
        retry_at, number = 0.0, 0
        while True:
            number += 1
            await self._pace(retry_at)
            attempt = await self._gated_attempt(body, tokens)
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
        now = self._monotonic()
        paused = self._not_before - now
        if paused > MAX_WAIT_SECONDS:
            raise ProviderBackoff(paused, asked=self._pause_asked)
        start = self._reserve_rate_slot(max(now, retry_at, self._not_before))
        if start > now:
            REGISTRY.add(WAITS, (self._role_label, "pause"), start - now)
            await self._sleep(start - now)

    def _reserve_rate_slot(self, start: float) -> float:
        """Space attempts 60/rpm seconds apart (no bursts: the simplest safe limiter)."""
        per_minute = self._settings.requests_per_minute
        if per_minute == 0 or self._gate.limits_requests:
            return start
        start = max(start, self._next_rate_slot)
        self._next_rate_slot = start + 60.0 / per_minute
        return start

    def _retry_time(self, attempt: _Attempt, retry: int) -> float:
        """When the next attempt may start; a 429 or Retry-After pauses the whole client,
        never longer than `max_retry_after_seconds` (one answer must not park it for days)."""
        asked, cap = attempt.retry_after, self._settings.max_retry_after_seconds
        delay = backoff_delay(retry, self._rng) if asked is None else capped_wait(asked, cap)
        over = asked if asked is not None and asked > delay else None  # what the cap cut
        retry_at = self._monotonic() + delay
        if (attempt.status == 429 or asked is not None) and retry_at > self._not_before:
            self._not_before, self._pause_asked = retry_at, over
        if delay > MAX_WAIT_SECONDS:
            raise ProviderBackoff(delay, asked=over)
        return retry_at

    async def _gated_attempt(self, body: bytes, tokens: int) -> _Attempt:
        """One attempt admitted by the gate, which learns what it used and any pause asked
        for (also when the attempt was cancelled: it then keeps the estimate)."""
        entered = time.monotonic()
        admitted = await self._gate.enter(tokens)
        started = time.monotonic()
        REGISTRY.add(WAITS, (self._role_label, "budget"), started - entered)
        REGISTRY.add(IN_FLIGHT, (self._role_label,), 1)
        attempt: _Attempt | None = None
        try:
            attempt = await self._attempt(body)
            return attempt
        finally:
            REGISTRY.add(IN_FLIGHT, (self._role_label,), -1)
            if attempt is not None:
                usage = attempt.completion.usage if attempt.completion is not None else None
                seconds = time.monotonic() - started
                record_attempt(self._role_label, attempt.status, dict(usage or {}), seconds)
            used, pause = self._spent(attempt)
            await admitted.leave(used_tokens=used, pause_seconds=pause)

    def _spent(self, attempt: _Attempt | None) -> tuple[int | None, float | None]:
        """The tokens an attempt's reply reports, and the pause (capped) it asked for."""
        if attempt is None:
            return None, None
        reply = attempt.completion
        used = used_tokens(reply.usage) if reply is not None else None
        asked, cap = attempt.retry_after, self._settings.max_retry_after_seconds
        return used, None if asked is None else capped_wait(asked, cap)

    async def _attempt(self, body: bytes) -> _Attempt:
        # The failures are named as they were before aiohttp (ConnectError, ReadTimeout...):
        # operators and `providers check` read these names, not the library's.
        try:
            async with asyncio.timeout(self._deadline):
                response = await self._post(body)
        except aiohttp.ConnectionTimeoutError as exc:
            return _failure("timeout", _describe(exc, "ConnectTimeout"), retryable=True)
        except aiohttp.SocketTimeoutError as exc:
            return _failure("timeout", _describe(exc, "ReadTimeout"), retryable=True)
        except aiohttp.ServerTimeoutError as exc:
            return _failure("timeout", _describe(exc), retryable=True)
        except TimeoutError:
            return _failure("timeout", f"no full response within {self._deadline:g} s", True)
        except aiohttp.ClientConnectorError as exc:  # refused, unresolvable, TLS failed
            return _failure("connection error", _describe(exc, "ConnectError"), retryable=True)
        except aiohttp.ClientResponseError as exc:  # an HTTP response that does not parse
            detail = _describe(exc, "RemoteProtocolError")
            return _failure("connection error", detail, retryable=True)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError) as exc:
            return _failure("connection error", _describe(exc), retryable=True)
        except (aiohttp.ClientError, ValueError) as exc:  # a bad URL, an unsupported scheme...
            return _failure("protocol error", _describe(exc), retryable=False)
        return _read_response(response, self._secrets)

    async def _post(self, body: bytes) -> _Response:
        """POST the body and read the response up to the cap; redirects are not followed."""
        session = self._session or self._open()
        limit = self._settings.max_response_bytes
        async with session.post(
            self._url, data=body, headers=_JSON_HEADERS, allow_redirects=False, proxy=self._proxy
        ) as response:
            read = await read_capped(response, limit)
            if not read.whole:
                response.close()  # the rest is never read: the connection cannot serve again
            text = _decode(read.data, response.charset)
            return _Response(response.status, response.headers, text, None if read.whole else limit)

    def _open(self) -> aiohttp.ClientSession:
        """The client's one session: its connector holds `concurrency` connections, all
        to the provider; the semaphore keeps the calls within that, so none waits."""
        connector = self._connector or aiohttp.TCPConnector(
            limit=self._concurrency, limit_per_host=0
        )
        headers = {"User-Agent": "faithscreen"}
        key = self._settings.api_key.get_secret_value() if self._settings.api_key else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=headers,
            # Per phase, as before: a connect timeout, and a read timeout for each read
            # (the whole attempt's deadline is the asyncio.timeout around it).
            timeout=aiohttp.ClientTimeout(
                total=None,
                connect=None,
                sock_connect=self._settings.connect_timeout_seconds,
                sock_read=self._settings.timeout_seconds,
            ),
            # Not trust_env: it looks up the proxy and reads ~/.netrc in a thread on every
            # request (two thread hops, most of a call's CPU); the proxy is found once.
            trust_env=False,
        )
        return self._session


def _environment_proxy(url: str) -> str | None:
    """The proxy the environment names for this URL (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY),
    unless NO_PROXY exempts its host: once per client, as httpx2 picked it per client."""
    parts = urlsplit(url)
    proxies = getproxies()
    proxy = proxies.get(parts.scheme) or proxies.get("all")
    if not proxy or (parts.hostname and proxy_bypass(parts.hostname)):
        return None
    return proxy


def _decode(raw: bytes, charset: str | None) -> str:
    """The body as text in its declared charset (UTF-8 when none or unknown); a byte that
    does not decode becomes U+FFFD rather than losing the whole reply."""
    try:
        return raw.decode(charset or "utf-8", errors="replace")
    except LookupError:
        return raw.decode("utf-8", errors="replace")


def _read_response(response: _Response, secrets: tuple[str, ...]) -> _Attempt:
    status, text = response.status, response.text
    if not 200 <= status <= 299:
        return _error_status(response, secrets)
    if response.cut_at is not None:
        # Never read as a reply, and not retried: a provider that sent too much once will
        # most likely do so again, each time costing the cap, and the pair goes to a person.
        text = redact_cut(text, secrets)
        return _Attempt(status, text, None, TOO_LARGE, too_large_detail(response.cut_at))
    try:
        # A reply is kept as sent: its content is stored byte for byte, and read again.
        return _Attempt(status, text, read_completion(text))
    except MalformedBody as exc:
        # Not retried: the provider did answer, and a gateway that garbles a body does so
        # again; the pipeline records a provider_error and the pair goes to a person.
        text = redact(text, secrets)
        return _Attempt(status, text, None, "malformed body", f"{exc}; body: {_excerpt(text)}")


def _error_status(response: _Response, secrets: tuple[str, ...]) -> _Attempt:
    """A status that is not a success keeps its meaning (a 429 still pauses and is
    retried) even when its body was over the cap; the body is then kept cut."""
    status, cut_at = response.status, response.cut_at
    retryable = is_retryable_status(status)
    wait = retry_after_seconds(response.headers) if retryable else None
    if cut_at is None:
        # Redacted whole before the excerpt is cut: a key across the cut would show half.
        text = redact(response.text, secrets)
        detail = _excerpt(text)
    else:
        text = redact_cut(response.text, secrets)
        detail = f"{_excerpt(text)} ({too_large_detail(cut_at)})"
    return _Attempt(status, text, None, f"HTTP {status}", detail, retryable, wait)


def _failure(kind: str, detail: str, retryable: bool) -> _Attempt:
    return _Attempt(kind=kind, detail=detail, retryable=retryable)


def _describe(exc: BaseException, name: str | None = None) -> str:
    text, name = str(exc), name or type(exc).__name__
    return f"{name}: {text}" if text else name


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
        tool_calls=reply.tool_calls if reply else (),
    )
