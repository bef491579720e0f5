"""What unauthorised and slow clients cost a real `faithscreen serve`, on loopback.

    python bench/client_limits_bench.py [--body-mib 400] [--slow 200] [--window 10]
                                        [--code DIR]

1. Memory. A POST /v1/screenings with no key and a body of --body-mib MiB, sent as fast as
   the socket takes it: the answer's status, how long it took and how much of the body had
   been sent by then, and the server's resident memory (VmRSS, and its peak VmHWM, from
   /proc) before and after, as a ratio.
2. Slow clients. /healthz latency (p50, p99, max over sequential calls on one keep-alive
   connection) with no other client, then while --slow connections trickle their headers
   a byte a second for --window seconds, and the ratio of the two. With the default
   FAITHSCREEN_CLIENT_TIMEOUT_SECONDS (30) no slow client is cut off during a 10 s window;
   the run also counts how many the server closed.

--code runs the server from another checkout of the project (PYTHONPATH=DIR), to measure
the code before a change in the same run of this script. Loopback only; every loop is
bounded and stops by itself.
"""

from __future__ import annotations

import argparse
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2

MIB = 1024 * 1024


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serve(code: Path, workdir: Path) -> Iterator[tuple[int, int]]:
    """A `faithscreen serve` (auth on, SQLite in `workdir`) from `code`: (pid, port)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")}
    env |= {"PYTHONPATH": str(code), "FAITHSCREEN_AUTH": "on"}
    env["FAITHSCREEN_DATABASE_URL"] = f"sqlite:///{workdir / 'bench.db'}"
    command = [sys.executable, "-c", "from app.cli import main; main()", "serve"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    with (workdir / "serve.log").open("ab") as log:
        process = subprocess.Popen(command, env=env, cwd=workdir, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                time.sleep(0.1)
        yield process.pid, port
    finally:
        process.terminate()
        process.wait(timeout=30)


def memory_kib(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0])
    return fields


def unauthorised_upload(pid: int, port: int, body_mib: int) -> None:
    before = memory_kib(pid)
    head = (
        "POST /v1/screenings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {body_mib * MIB}\r\n\r\n"
    ).encode()
    sent = [0]
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head)
        started = time.monotonic()

        def upload() -> None:
            chunk = b" " * MIB
            try:
                for _ in range(body_mib):
                    sock.sendall(chunk)
                    sent[0] += len(chunk)
            except OSError:  # the server closed the connection
                pass

        sender = threading.Thread(target=upload, daemon=True)
        sender.start()
        sock.settimeout(120)
        answer = sock.recv(4096)
        took, sent_by_then = time.monotonic() - started, sent[0]
        sender.join(timeout=120)
    after = memory_kib(pid)
    status = answer.split(b" ", 2)[1].decode() if answer else "(closed)"
    print(
        f"  no key, {body_mib} MiB body: {status} after {took:.2f} s, "
        f"{sent_by_then / MIB:.0f} MiB of it sent by then"
    )
    for name in ("VmRSS", "VmHWM"):
        ratio = after[name] / before[name]
        print(
            f"  {name}: {before[name] / 1024:.0f} MB -> {after[name] / 1024:.0f} MB ({ratio:.2f}x)"
        )


def health_latencies(port: int, seconds: float) -> list[float]:
    latencies = []
    with httpx2.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            started = time.monotonic()
            client.get("/healthz").raise_for_status()
            latencies.append(time.monotonic() - started)
            time.sleep(0.01)
    return latencies


def summary(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (
        f"{len(ordered)} calls, p50 {statistics.median(ordered) * 1000:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, max {ordered[-1] * 1000:.1f} ms"
    )


def trickle(port: int, count: int, seconds: float, stop: threading.Event) -> int:
    """`count` connections sending their headers a byte a second; returns how many the
    server closed before `seconds` passed."""
    selector = selectors.DefaultSelector()
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ)
        socks.append(sock)
    closed: set[socket.socket] = set()
    end, next_byte = time.monotonic() + seconds, 0.0
    while time.monotonic() < end and not stop.is_set():
        for key, _ in selector.select(timeout=0.05):
            try:
                data = key.fileobj.recv(4096)  # type: ignore[union-attr]
            except OSError:
                data = b""
            if not data:
                closed.add(key.fileobj)  # type: ignore[arg-type]
                selector.unregister(key.fileobj)
        if time.monotonic() >= next_byte:
            next_byte = time.monotonic() + 1
            for sock in socks:
                if sock not in closed:
                    try:
                        sock.send(b"a")
                    except OSError:
                        closed.add(sock)
    for sock in socks:
        sock.close()
    selector.close()
    return len(closed)


def slow_clients(port: int, count: int, window: float) -> None:
    reference = health_latencies(port, min(window, 5))
    print(f"  /healthz alone: {summary(reference)}")
    stop, closed = threading.Event(), [0]

    def run() -> None:
        closed[0] = trickle(port, count, window, stop)

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(1)  # every slow connection open and trickling
    loaded = health_latencies(port, window - 2)
    stop.set()
    worker.join()
    print(f"  /healthz with {count} slow clients: {summary(loaded)}")
    ratio = statistics.median(loaded) / statistics.median(reference)
    print(
        f"  p50 ratio {ratio:.2f}, max {max(loaded) * 1000:.1f} ms; "
        f"slow clients closed by the server within {window:.0f} s: {closed[0]} of {count}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--body-mib", type=int, default=400)
    parser.add_argument("--slow", type=int, default=200)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--code", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    print(f"code: {args.code}")
    with tempfile.TemporaryDirectory() as tmp:
        with serve(args.code, Path(tmp)) as (pid, port):
            unauthorised_upload(pid, port, args.body_mib)
        with serve(args.code, Path(tmp)) as (_, port):
            slow_clients(port, args.slow, args.window)


if __name__ == "__main__":
    main()
