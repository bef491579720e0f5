"""A real `faithscreen serve`, reached over raw loopback sockets: a request without a key is
answered from its headers alone, and a request that does not arrive within
FAITHSCREEN_CLIENT_TIMEOUT_SECONDS (1 s here) of its first byte is cut off, however slowly
its bytes trickle, without slowing anyone else and without a 5xx.

Every loop here is bounded and stops by itself; nothing leaves loopback. The bounds are
generous (GIVE_UP) and end as soon as the server has acted, so a loaded machine that is
slow to act cannot fail them; only the server's own deadline is short, where it is the
thing under test.
"""

from __future__ import annotations

import re
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field

import httpx2
import pytest

from tests.support.serve_process import ServeProcess, StartServe

FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)
DEADLINE = 1.0
# The deadline of the server that answers from headers alone (see that test).
HEADERS_DEADLINE = 10.0
# How long a trickling client keeps going before the test gives up on being cut off (a
# bound for a defect only: a trickler stops as soon as the server closes it).
GIVE_UP = 30.0
FOUR_HUNDRED_MIB = 400 * 1024 * 1024
BODY_ENDPOINTS = [
    "/v1/screenings",
    "/v1/batches",
    "/v1/keys",
    "/v1/rescore",
    "/v1/queue/1/decision",
    "/v1/queue/1/reopen",
]


@pytest.fixture
def server(start_serve: StartServe) -> ServeProcess:
    env = {"FAITHSCREEN_AUTH": "on", "FAITHSCREEN_CLIENT_TIMEOUT_SECONDS": str(DEADLINE)}
    return start_serve(env)


def admin_key(server: ServeProcess) -> str:
    found = FIRST_KEY.findall(server.log.read_text())
    assert found, server.log.read_text()
    return str(found[0])


def post_head(path: str, length: int, *headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"Content-Length: {length}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def status_of(answer: bytes) -> int | None:
    found = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    return int(found[1]) if found else None


def complete(answer: bytes) -> bool:
    """Whether `answer` holds a whole response: its head and Content-Length bytes of body."""
    head, found, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    return bool(found and length and len(body) >= int(length[1]))


def read_answer(sock: socket.socket, timeout: float) -> bytes:
    """One response, or what came of it before the server closed or `timeout` passed."""
    sock.settimeout(timeout)
    answer = b""
    try:
        while not complete(answer) and (chunk := sock.recv(65536)):
            answer += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return answer


def assert_no_server_error(server: ServeProcess) -> None:
    log = server.log.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log
    assert not re.search(r'HTTP/1\.1" 5\d\d', log), log


# --- 401 before the body ----------------------------------------------------------------------


def test_no_key_is_answered_from_the_headers_alone(start_serve: StartServe) -> None:
    """400 MiB declared, 4 KiB sent, to every endpoint that takes a body: the 401 comes
    without the server waiting for the rest (it would wait past the deadline, and answer
    408, if it read the body first). The deadline here is 10 s, not 1 s, so a loaded
    machine that takes seconds to answer cannot pass for a server that waited."""
    env = {"FAITHSCREEN_AUTH": "on", "FAITHSCREEN_CLIENT_TIMEOUT_SECONDS": str(HEADERS_DEADLINE)}
    server = start_serve(env)
    answers = {}
    for path in BODY_ENDPOINTS:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(post_head(path, FOUR_HUNDRED_MIB) + b"[" * 4096)
            answers[path] = read_answer(sock, timeout=GIVE_UP)
    for path, answer in answers.items():
        assert status_of(answer) == 401, (path, answer[:300])
        assert b'"code":"unauthorized"' in answer, path
    assert_no_server_error(server)


# --- Slow clients ----------------------------------------------------------------------------


@dataclass
class Trickler:
    """A client sending `head` at once, then one byte every `every` seconds, until the
    server closes the connection or GIVE_UP passes."""

    sock: socket.socket
    every: float
    opened: float = field(default_factory=time.monotonic)
    answer: bytes = b""
    closed_after: float | None = None
    next_byte: float = 0.0

    @classmethod
    def open(cls, port: int, head: bytes, every: float = 0.1) -> Trickler:
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(head)
        sock.setblocking(False)
        return cls(sock, every, next_byte=time.monotonic() + every)

    def on_readable(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionResetError:
            chunk = b""
        self.answer += chunk
        if not chunk:
            self.close()

    def tick(self, now: float) -> None:
        if self.closed_after is None and now >= self.next_byte:
            self.next_byte = now + self.every
            try:
                self.sock.send(b"a")
            except (BrokenPipeError, ConnectionResetError):
                self.close()

    def close(self) -> None:
        if self.closed_after is None:
            self.closed_after = time.monotonic() - self.opened
            self.sock.close()


def run_until_cut_off(tricklers: list[Trickler]) -> None:
    """Drive every trickler until the server closed them all, or GIVE_UP passes."""
    selector = selectors.DefaultSelector()
    for trickler in tricklers:
        selector.register(trickler.sock, selectors.EVENT_READ, trickler)
    give_up = time.monotonic() + GIVE_UP
    try:
        while time.monotonic() < give_up and any(t.closed_after is None for t in tricklers):
            for key, _ in selector.select(timeout=0.02):
                key.data.on_readable()
                if key.data.closed_after is not None:
                    selector.unregister(key.fileobj)
            now = time.monotonic()
            for trickler in tricklers:
                trickler.tick(now)
    finally:
        for trickler in tricklers:
            if trickler.closed_after is None:
                selector.unregister(trickler.sock)
                trickler.sock.close()
        selector.close()


def slow_heads(server: ServeProcess) -> dict[str, bytes]:
    key = admin_key(server)
    return {
        "nothing at all": b"",
        "headers, a byte at a time": b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ",
        "a body, a byte at a time": post_head(
            "/v1/screenings", 100_000, f"Authorization: Bearer {key}"
        )
        + b'{"informal": "',
    }


def test_a_request_that_trickles_in_is_cut_off_at_the_deadline(server: ServeProcess) -> None:
    heads = slow_heads(server)
    tricklers = {what: Trickler.open(server.port, head) for what, head in heads.items()}
    run_until_cut_off(list(tricklers.values()))
    for what, trickler in tricklers.items():
        # Ten bytes a second for GIVE_UP seconds would have kept it open without the deadline.
        assert trickler.closed_after is not None, f"{what}: never cut off"
        assert status_of(trickler.answer) == 408, f"{what}: {trickler.answer[:300]!r}"
        assert b'"code":"request_timeout"' in trickler.answer
    assert_no_server_error(server)


def test_a_client_answered_early_is_cut_off_at_the_deadline_too(start_serve: StartServe) -> None:
    """A 401 goes out at once; the client trickling the rest of its body is then closed at
    the deadline, not left to hold the connection. The 10 s deadline of the headers test:
    with 1 s, a loaded machine once answered 408, the 401 not out within the second."""
    env = {"FAITHSCREEN_AUTH": "on", "FAITHSCREEN_CLIENT_TIMEOUT_SECONDS": str(HEADERS_DEADLINE)}
    server = start_serve(env)
    trickler = Trickler.open(server.port, post_head("/v1/screenings", FOUR_HUNDRED_MIB))
    run_until_cut_off([trickler])
    assert status_of(trickler.answer) == 401, trickler.answer[:300]
    assert trickler.closed_after is not None, "never cut off"


HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def test_a_request_sent_in_pieces_within_the_deadline_is_served(start_serve: StartServe) -> None:
    """Pieces with pauses between them make one request. The server's deadline is the
    default 30 s here, not 1 s: a loaded machine that stretches the pauses cannot make the
    request late."""
    server = start_serve({})
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        for piece in (HEALTHZ[:10], HEALTHZ[10:30], HEALTHZ[30:]):
            sock.sendall(piece)
            time.sleep(0.2)
        assert status_of(read_answer(sock, GIVE_UP)) == 200


def test_an_idle_keep_alive_is_left_alone(server: ServeProcess) -> None:
    """The time a keep-alive connection waits between requests is not the deadline's:
    idle past the 1 s deadline (a sleep never ends early), well within uvicorn's 5 s
    keep-alive, each request sent whole."""
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(HEALTHZ)
        assert status_of(read_answer(sock, GIVE_UP)) == 200
        time.sleep(DEADLINE * 1.5)
        sock.sendall(HEALTHZ)
        assert status_of(read_answer(sock, GIVE_UP)) == 200


def test_200_slow_clients_do_not_hold_up_anyone_else(server: ServeProcess) -> None:
    """While 200 connections trickle their headers, /healthz still answers (no speed is
    asserted: the client's timeout is generous, and bench/client_limits_bench.py measures
    how fast), and every slow connection is cut off at the deadline."""
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
    tricklers = [Trickler.open(server.port, head, every=0.2) for _ in range(200)]
    latencies: list[float] = []
    done = threading.Event()

    def poll_health() -> None:
        with httpx2.Client(base_url=server.base_url, timeout=GIVE_UP) as client:
            while not done.is_set() and len(latencies) < 200:
                started = time.monotonic()
                assert client.get("/healthz").status_code == 200
                latencies.append(time.monotonic() - started)
                time.sleep(0.02)

    poller = threading.Thread(target=poll_health)
    poller.start()
    try:
        run_until_cut_off(tricklers)
    finally:
        done.set()
        poller.join()
    assert latencies, "no /healthz answered while the slow clients were connected"
    assert all(t.closed_after is not None for t in tricklers), "some were never cut off"
    print(f"/healthz under 200 slow clients: {len(latencies)} calls, max {max(latencies):.3f} s")
    assert_no_server_error(server)
