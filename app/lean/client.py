"""The Lean checker's HTTP call: `POST {server_url}/api/check` on a Kimina Lean Server.

In the LLM client's style (app/llm/client.py), and sharing its pieces: the body is read up
to a cap (capped_body.py), a 429 or 5xx or a dropped connection is retried a bounded number
of times with full-jitter backoff, a Retry-After is honoured up to MAX_WAIT_SECONDS inside
the call and beyond that raises LeanBackoff (the worker puts the job back, as for a
provider), and credentials never appear in a stored body or error. Not kimina-client: its
wheel requires `datasets`, `requests`, `loguru`, `tenacity`, `tabulate`, `colorama` and
`pip` itself, for one POST.

At most FAITHSCREEN_LEAN_MAX_IN_FLIGHT checks are in flight at once (a semaphore and a
connection pool of that size): Kimina answers 429 when no REPL is free. Every check asks
`reuse: true`, so Kimina runs it on a REPL that has the same header loaded already.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import TracebackType
from urllib.parse import urlsplit

import aiohttp

from app.lean.call import LeanCall
from app.lean.errors import LeanBackoff
from app.llm.capped_body import TOO_LARGE, read_capped, redact_cut
from app.llm.redaction import redact
from app.llm.retry import (
    MAX_WAIT_SECONDS,
    backoff_delay,
    capped_wait,
    is_retryable_status,
    retry_after_seconds,
)
from app.settings import LeanSettings

Sleep = Callable[[float], Awaitable[object]]
CHECK_PATH = "/api/check"
VERSION_PATH = "/api/openapi.json"  # Kimina's FastAPI document: info.version
MAX_RETRIES = 3
MAX_RESPONSE_BYTES = 1024 * 1024
# The longest deferral a Retry-After may ask for; longer is cut to this.
MAX_RETRY_AFTER_SECONDS = 300.0
# Kimina waits up to LEAN_SERVER_MAX_WAIT (60 s by default) for a free REPL, then runs the
# header and the body each within `timeout`: the client waits for all of it, and a margin.
KIMINA_REPL_WAIT_SECONDS = 60
_MARGIN_SECONDS = 10
_CONNECT_SECONDS = 5.0
_VERSION_CHARS = 64


@dataclass(frozen=True, slots=True)
class _Attempt:
    status: int | None = None
    raw_body: str | None = None
    failure: str | None = None
    detail: str = ""
    retryable: bool = False
    retry_after: float | None = None


class LeanClient:
    """Checks against one Kimina Lean Server; `sleep`, `rng` and `connector` are seams for
    tests, `deadline_seconds` too (the whole check's limit, computed from the settings)."""

    def __init__(
        self,
        settings: LeanSettings,
        *,
        connector: aiohttp.BaseConnector | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        deadline_seconds: float | None = None,
    ) -> None:
        if not settings.server_url:
            raise ValueError("a Lean client needs FAITHSCREEN_LEAN_SERVER_URL")
        self._root = settings.server_url.rstrip("/")
        self._timeout = settings.timeout_seconds
        key = settings.server_api_key.get_secret_value() if settings.server_api_key else ""
        self._key = key
        self._secrets = (key,) if key else ()
        self._slots = asyncio.Semaphore(settings.max_in_flight)
        self._in_flight = settings.max_in_flight
        self._connector = connector
        self._session: aiohttp.ClientSession | None = None
        self._sleep = sleep
        self._rng = rng
        default = KIMINA_REPL_WAIT_SECONDS + 2 * self._timeout + _MARGIN_SECONDS
        self._deadline = deadline_seconds if deadline_seconds is not None else default
        self._version: str | None = None
        self._version_asked = False

    @property
    def server_url(self) -> str:
        """Where checks go, without user info or query (what a stored check names)."""
        parts = urlsplit(self._root)
        host = parts.hostname or ""
        try:
            port = f":{parts.port}" if parts.port is not None else ""
        except ValueError:
            port = ""
        host = f"[{host}]" if ":" in host else host
        return parts._replace(netloc=host + port, query="", fragment="").geturl()

    async def check(self, snippet_id: str, code: str) -> LeanCall:
        """One check of `code`, retried on transient failures; see the module docstring."""
        payload = {
            "snippets": [{"id": snippet_id, "code": code}],
            "timeout": self._timeout,
            "reuse": True,
            "debug": False,
        }
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        async with self._slots:
            started = time.monotonic()
            attempt, attempts = await self._attempts(body)
            latency_ms = round((time.monotonic() - started) * 1000)
            version = await self._server_version()
        return LeanCall(
            server_url=self.server_url,
            server_version=version,
            snippet_id=snippet_id,
            code=code,
            timeout_seconds=self._timeout,
            http_status=attempt.status,
            raw_body=attempt.raw_body,
            failure=attempt.failure,
            error=_error(attempt, attempts, self._secrets),
            latency_ms=latency_ms,
            attempts=attempts,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
        elif self._connector is not None:
            await self._connector.close()

    async def __aenter__(self) -> LeanClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def _attempts(self, body: bytes) -> tuple[_Attempt, int]:
        number = 0
        while True:
            number += 1
            attempt = await self._attempt(body)
            if not attempt.retryable or number > MAX_RETRIES:
                return attempt, number
            await self._sleep(self._wait(attempt, number))

    def _wait(self, attempt: _Attempt, retry: int) -> float:
        asked = attempt.retry_after
        if asked is None:
            return backoff_delay(retry, self._rng)
        if asked > MAX_WAIT_SECONDS:
            granted = capped_wait(asked, MAX_RETRY_AFTER_SECONDS)
            raise LeanBackoff(granted, asked=asked if asked > granted else None)
        return capped_wait(asked, MAX_WAIT_SECONDS)

    async def _attempt(self, body: bytes) -> _Attempt:
        try:
            async with asyncio.timeout(self._deadline):
                status, headers, text, whole = await self._post(body)
        except TimeoutError:
            return _Attempt(failure="timeout", detail=f"no answer within {self._deadline:g} s")
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, OSError) as exc:
            return _Attempt(failure="connection error", detail=_describe(exc), retryable=True)
        except (aiohttp.ClientError, ValueError) as exc:  # a bad URL, say
            return _Attempt(failure="protocol error", detail=_describe(exc))
        if not whole:
            cut = redact_cut(text, self._secrets)
            return _Attempt(status, cut, TOO_LARGE, f"over {MAX_RESPONSE_BYTES} bytes")
        if 200 <= status <= 299:
            return _Attempt(status, text)
        retryable = is_retryable_status(status)
        wait = retry_after_seconds(headers) if retryable else None
        return _Attempt(status, redact(text, self._secrets), None, "", retryable, wait)

    async def _post(self, body: bytes) -> tuple[int, Mapping[str, str], str, bool]:
        session = self._session or self._open()
        headers = {"Content-Type": "application/json"}
        async with session.post(
            self._root + CHECK_PATH, data=body, headers=headers, allow_redirects=False
        ) as response:
            read = await read_capped(response, MAX_RESPONSE_BYTES)
            if not read.whole:
                response.close()
            # Bytes that are not UTF-8 are kept as lone surrogates, which the column keeps
            # (ProviderText(raw=True)): the stored body encodes back to the bytes received.
            text = read.data.decode("utf-8", errors="surrogateescape")
            return response.status, response.headers, text, read.whole

    async def _server_version(self) -> str | None:
        """Kimina's version from its API document, asked once per client (None if it
        cannot be read: the check stands without it)."""
        if self._version_asked:
            return self._version
        self._version_asked = True
        session = self._session or self._open()
        try:
            async with asyncio.timeout(_CONNECT_SECONDS * 2):
                async with session.get(self._root + VERSION_PATH, allow_redirects=False) as got:
                    read = await read_capped(got, MAX_RESPONSE_BYTES)
                    document = json.loads(read.data) if got.status == 200 and read.whole else {}
        except (TimeoutError, aiohttp.ClientError, OSError, ValueError, RecursionError):
            return None
        version = document.get("info", {}).get("version") if isinstance(document, dict) else None
        self._version = version[:_VERSION_CHARS] if isinstance(version, str) else None
        return self._version

    def _open(self) -> aiohttp.ClientSession:
        connector = self._connector or aiohttp.TCPConnector(limit=self._in_flight, limit_per_host=0)
        headers = {"User-Agent": "faithscreen"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        self._session = aiohttp.ClientSession(
            connector=connector,
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=_CONNECT_SECONDS),
            trust_env=False,
        )
        return self._session


def _error(attempt: _Attempt, attempts: int, secrets: tuple[str, ...]) -> str | None:
    """What went wrong, in a sentence (None when a success status came back)."""
    if attempt.failure is None and attempt.status is not None and 200 <= attempt.status <= 299:
        return None
    kind = attempt.failure or f"HTTP {attempt.status}"
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    detail = f": {attempt.detail}" if attempt.detail else ""
    return redact(f"{kind}{tried}{detail}", secrets)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
