"""A scripted OpenAI-compatible chat completions server, on a real loopback socket.

In tests (the server runs its own event loop in a background thread):

    with ScriptedOpenAI() as server:
        server.script("Fermat", steps=[HttpError(429, headers={"Retry-After": "1"}), Reply("...")])
        ...  # point FAITHSCREEN_JUDGE_BASE_URL (or ProviderSettings.base_url) at server.base_url

A request is answered by the first rule (in `script()` order) that matches it and still has
steps left; it consumes that rule's next step. With no such rule, `server.default` answers
(a Step, or a callable request -> Step; by default a FAITHFUL contract reply), after
`server.latency` seconds.

Standalone, for benchmarks (always the default reply, after a fixed latency):

    python -m tests.support.scripted_openai --port 8100 --latency-ms 100

A minimal HTTP/1.1 server on asyncio streams (keep-alive, Content-Length or chunked
request bodies) rather than an ASGI app, because `Reset` must drop a connection without
any response, which ASGI servers do not allow.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Self

from tests.support.scripted_formats import (
    ToolCallReply,
    arguments,
    asked_format,
    submit,
    tool_call_completion,
)

CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})


def contract_reply(
    verdict: str = "FAITHFUL",
    back_translation: str | None = "The formal statement says what the informal one says.",
    issues: str = "none",
) -> str:
    """A reply in the contract's field order (BACK-TRANSLATION, VERDICT, ISSUES); the
    judge's shape without BACK-TRANSLATION when `back_translation` is None."""
    fields = [] if back_translation is None else [f"BACK-TRANSLATION: {back_translation}"]
    return "\n".join([*fields, f"VERDICT: {verdict}", f"ISSUES: {issues}"]) + "\n"


FAITHFUL_REPLY = contract_reply("FAITHFUL")


class Absent:
    """The type of ABSENT."""

    def __repr__(self) -> str:
        return "ABSENT"


# A Reply field set to ABSENT leaves its key out of the body (None sends `null`).
ABSENT = Absent()


# --- Steps: what the server does with one request ---------------------------------------


@dataclass(frozen=True)
class Reply:
    """A 200 chat completion. `usage=None` reports token counts estimated from the text."""

    content: str | None = FAITHFUL_REPLY
    finish_reason: str | Absent | None = "stop"
    usage: dict[str, Any] | None = None
    model: str | Absent | None = None  # reported model; None echoes the requested one
    refusal: str | None = None
    delay: float = 0.0


@dataclass(frozen=True)
class HttpError:
    """An HTTP error status; an empty `body` sends an OpenAI-style error object."""

    status: int
    body: str = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Reset:
    """Drop the connection with a TCP reset and no response at all."""


@dataclass(frozen=True)
class Hang:
    """Wait `seconds` (to trip the client's read timeout), then answer with `then`
    (None: the default step)."""

    seconds: float
    then: Step | None = None


@dataclass(frozen=True)
class RawBody:
    """Exactly this body (malformed bodies; text goes as UTF-8), with this status and any
    further headers (a `content-encoding`, say)."""

    text: str | bytes
    status: int = 200
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class BigReply:
    """A 200 completion whose content is at least `size` UTF-8 bytes: `head`, `filler`
    repeated, `tail` (by default a FAITHFUL contract reply with a long back-translation).
    The body is written piece by piece as it is made, never held whole: a 50 MB reply
    costs the server a few KiB, and a client that stops reading ends the write."""

    size: int
    head: str = "BACK-TRANSLATION: "
    filler: str = "n + 0 = n. "
    tail: str = "\nVERDICT: FAITHFUL\nISSUES: none\n"
    finish_reason: str = "stop"

    @property
    def fillers(self) -> int:
        """How many times `filler` is repeated."""
        room = self.size - len((self.head + self.tail).encode())
        return max(0, -(-room // len(self.filler.encode())))


@dataclass(frozen=True)
class Trickle:
    """Announce a long body, then send one byte every `interval` seconds, forever: every
    read succeeds, so only a whole-attempt deadline ends the call."""

    interval: float = 0.1


Step = Reply | HttpError | Reset | Hang | RawBody | BigReply | Trickle | ToolCallReply
DefaultStep = Step | Callable[["RecordedRequest"], Step]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # None when the body is not JSON
    time: float  # time.monotonic() when the request was fully read

    @property
    def model(self) -> str | None:
        model = self.json.get("model") if isinstance(self.json, dict) else None
        return model if isinstance(model, str) else None

    @property
    def text(self) -> str:
        """Every message's content, joined with newlines (what `match` searches)."""
        messages = self.json.get("messages") if isinstance(self.json, dict) else None
        if not isinstance(messages, list):
            return ""
        contents = (m.get("content") for m in messages if isinstance(m, dict))
        return "\n".join(c for c in contents if isinstance(c, str))


class Rule:
    """Steps for the requests whose model is `model` and whose text contains `match`."""

    def __init__(self, match: str | None, model: str | None, steps: Iterable[Step]) -> None:
        self.match = match
        self.model = model
        self._steps = deque(steps)
        self.hits = 0  # requests this rule answered

    @property
    def remaining(self) -> int:
        return len(self._steps)

    def matches(self, request: RecordedRequest) -> bool:
        if self.model is not None and request.model != self.model:
            return False
        return self.match is None or self.match in request.text

    def take(self) -> Step:
        self.hits += 1
        return self._steps.popleft()


# --- The server ----------------------------------------------------------------------------


class ScriptedOpenAI:
    """See the module docstring. Thread-safe: script and inspect it from any thread."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        default: DefaultStep | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record: bool = True,  # False for long benchmarks: keeps memory flat
    ) -> None:
        self.latency = latency
        self.default: DefaultStep = default if default is not None else faithful_in_format
        self.host, self.port, self._record = host, port, record
        self._rules: list[Rule] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Condition()
        self.in_flight = 0
        self.max_in_flight = 0
        self._served = 0
        self._connections: set[asyncio.Task[Any]] = set()
        self._server: asyncio.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(
        self, match: str | None = None, *, model: str | None = None, steps: Iterable[Step]
    ) -> Rule:
        rule = Rule(match, model, steps)
        with self._lock:
            self._rules.append(rule)
        return rule

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def wait_for_requests(self, count: int, timeout: float = 120.0) -> list[RecordedRequest]:
        """Block until `count` requests have arrived (from a thread other than the server's)."""
        with self._lock:
            if not self._lock.wait_for(lambda: len(self._requests) >= count, timeout):
                raise TimeoutError(f"{len(self._requests)} of {count} requests in {timeout} s")
            return list(self._requests)

    # Running in a background thread (tests) ---------------------------------------------

    def start(self) -> Self:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="scripted-openai", daemon=True
        )
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.open(), self._loop).result(timeout=60)
        return self

    def stop(self) -> None:
        loop, self._loop = self._loop, None
        if loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.close(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        self._thread.join(timeout=60)
        loop.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # Running in the current event loop (standalone) --------------------------------------

    async def open(self) -> None:
        """Listen (on an ephemeral port when `port` is 0; `port` then holds the real one)."""
        self._server = await asyncio.start_server(
            self._connection, self.host, self.port, limit=1 << 20, backlog=1024
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and cut every open connection, hanging ones included."""
        if self._server is not None:
            self._server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def serve_forever(self) -> None:
        await self.open()
        assert self._server is not None
        print(f"scripted-openai listening on {self.base_url}", flush=True)
        await self._server.serve_forever()

    # One connection: requests one after another (keep-alive) -----------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while await self._exchange(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # the client went away, or sent something that is not HTTP/1.1
        except asyncio.CancelledError:
            # close() cut the connection. Ending normally: Python 3.11's stream callback
            # logs a cancelled handler task as an error.
            pass
        except ValueError:
            with contextlib.suppress(ConnectionError):
                await _write(writer, 400, b"bad request\n", {"connection": "close"})
        finally:
            self._connections.discard(task)
            writer.close()

    async def _exchange(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Read one request and answer it; True to keep the connection for another."""
        method, path, version, headers = _parse_head(await reader.readuntil(b"\r\n\r\n"))
        request = _request(method, path, headers, await _read_body(reader, headers))
        step, is_default = self._select(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if is_default and self.latency > 0:
                await asyncio.sleep(self.latency)
            keep = await self._answer(step, request, writer)
        finally:
            self.in_flight -= 1
        return keep and version == "HTTP/1.1" and headers.get("connection") != "close"

    def _select(self, request: RecordedRequest) -> tuple[Step, bool]:
        if request.method != "POST" or request.path not in CHAT_PATHS:
            return HttpError(404, f"no route for {request.method} {request.path}"), False
        with self._lock:
            if self._record:
                self._requests.append(request)
                self._lock.notify_all()
            for rule in self._rules:
                if rule.remaining and rule.matches(request):
                    return rule.take(), False
        return self._default_step(request), True

    def _default_step(self, request: RecordedRequest) -> Step:
        default = self.default
        return default(request) if callable(default) else default

    async def _answer(
        self, step: Step, request: RecordedRequest, writer: asyncio.StreamWriter
    ) -> bool:
        """Carry out one step; False when the connection must not be reused."""
        match step:
            case Reply():
                await asyncio.sleep(step.delay)
                self._served += 1
                completion = _completion(step, request, self._served)
                return await _write(writer, 200, _json_bytes(completion), _JSON)
            case HttpError():
                body = step.body or json.dumps(_error_object(step.status))
                return await _write(writer, step.status, body.encode(), {**_JSON, **step.headers})
            case RawBody():
                raw = step.text.encode() if isinstance(step.text, str) else step.text
                headers = {"content-type": step.content_type, **step.headers}
                return await _write(writer, step.status, raw, headers)
            case ToolCallReply():
                self._served += 1
                model = request.model or "scripted"
                usage = _estimated_usage(request, sum(len(t) for _, t in step.calls))
                body = tool_call_completion(step, model, self._served, usage)
                return await _write(writer, 200, _json_bytes(body), _JSON)
            case BigReply():
                self._served += 1
                await _write_big(writer, step, request, self._served)
            case Hang():
                await asyncio.sleep(step.seconds)
                return await self._answer(step.then or self._default_step(request), request, writer)
            case Reset():
                _reset(writer)
            case Trickle():
                await _trickle(writer, step.interval)
        return False


def faithful_in_format(request: RecordedRequest) -> Step:
    """A FAITHFUL reply in the format the request asks for: a `submit_review` tool call, a
    JSON object, or the text contract (text and grammar)."""
    asked, translator = asked_format(request.json)
    if asked == "tool":
        return submit("FAITHFUL", translator=translator)
    if asked == "json":
        back = "The formal statement says what the informal one says." if translator else None
        return Reply(arguments("FAITHFUL", back))
    return Reply()


# --- HTTP/1.1 pieces -------------------------------------------------------------------------

_JSON = {"content-type": "application/json"}


def _parse_head(head: bytes) -> tuple[str, str, str, dict[str, str]]:
    """Request line and headers; ValueError when they are not HTTP/1.x."""
    request_line, *lines = head.decode("latin-1").split("\r\n")
    method, path, version = request_line.split(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError(f"not HTTP/1.x: {request_line!r}")
    headers = {}
    for line in filter(None, lines):
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return method, path, version, headers


async def _read_body(reader: asyncio.StreamReader, headers: dict[str, str]) -> bytes:
    if headers.get("transfer-encoding", "").lower() == "chunked":
        return await _read_chunked(reader)
    return await reader.readexactly(int(headers.get("content-length", "0")))


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks = []
    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)  # the CRLF after each chunk
    while await reader.readuntil(b"\r\n") != b"\r\n":
        pass  # trailers, up to the blank line
    return b"".join(chunks)


def _request(method: str, path: str, headers: dict[str, str], body: bytes) -> RecordedRequest:
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        parsed = None
    return RecordedRequest(method, path.split("?")[0], headers, body, parsed, time.monotonic())


async def _write(
    writer: asyncio.StreamWriter, status: int, body: bytes, headers: dict[str, str]
) -> bool:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Scripted"
    lines = [f"HTTP/1.1 {status} {reason}", f"content-length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    return True


def _reset(writer: asyncio.StreamWriter) -> None:
    # SO_LINGER with a zero timeout makes close() send RST instead of a polite FIN.
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


async def _trickle(writer: asyncio.StreamWriter, interval: float) -> None:
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n{"
    )
    while not writer.is_closing():
        await writer.drain()  # raises ConnectionError once the client has gone
        await asyncio.sleep(interval)
        writer.write(b" ")


async def _write_big(
    writer: asyncio.StreamWriter, step: BigReply, request: RecordedRequest, number: int
) -> None:
    marker = "\x00content\x00"  # stands for the content: JSON writes it as \u0000content\u0000
    body = _completion(Reply(marker, step.finish_reason), request, number, step.size)
    before, after = _json_bytes(body).split(json.dumps(marker).encode())
    head, filler, tail = (_json_string(s) for s in (step.head, step.filler, step.tail))
    length = len(before) + len(head) + step.fillers * len(filler) + len(tail) + len(after) + 2
    writer.write(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
        + f"content-length: {length}\r\n\r\n".encode()
        + before
        + b'"'
        + head
    )
    per_piece = max(1, (64 << 10) // len(filler))
    for start in range(0, step.fillers, per_piece):
        writer.write(filler * min(per_piece, step.fillers - start))
        await writer.drain()  # raises ConnectionError once the client has gone
    writer.write(tail + b'"' + after)
    await writer.drain()


def _json_string(text: str) -> bytes:
    """`text` as the inside of a JSON string, without its quotes."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8")


def _completion(
    step: Reply, request: RecordedRequest, number: int, content_bytes: int | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.content}
    if step.refusal is not None:
        message["refusal"] = step.refusal
    choice: dict[str, Any] = {"index": 0, "message": message}
    if not isinstance(step.finish_reason, Absent):
        choice["finish_reason"] = step.finish_reason
    body: dict[str, Any] = {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": step.model or request.model or "scripted",
        "choices": [choice],
        "usage": step.usage
        if step.usage is not None
        else _estimated_usage(request, content_bytes or len(step.content or "")),
    }
    if isinstance(step.model, Absent):
        del body["model"]
    return body


def _estimated_usage(request: RecordedRequest, content_chars: int) -> dict[str, int]:
    prompt, completion = len(request.text) // 4 + 1, content_chars // 4 + 1
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _error_object(status: int) -> dict[str, Any]:
    return {"error": {"message": f"scripted HTTP {status}", "type": "scripted", "code": status}}


def _json_bytes(body: dict[str, Any]) -> bytes:
    # ensure_ascii=False sends Unicode as UTF-8, as real providers mostly do; a lone
    # surrogate has no UTF-8 form, so a body holding one goes as \ud800 escapes, as a
    # provider's JSON encoder would send it.
    try:
        return json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body).encode("ascii")


# --- Standalone ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: an ephemeral port (printed)")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay of every reply")
    parser.add_argument("--verdict", default="FAITHFUL", help="verdict of every reply")
    args = parser.parse_args(argv)
    server = ScriptedOpenAI(
        latency=args.latency_ms / 1000,
        default=Reply(contract_reply(args.verdict)),
        host=args.host,
        port=args.port,
        record=False,
    )
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.serve_forever())


if __name__ == "__main__":
    main()
