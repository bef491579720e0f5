"""Whether a pid is still the llama-server `start` launched, and signalling only that one.

The state file names a pid. Once that server has exited (a reboot, a crash, a kill by
hand) the kernel hands the number to some other process, and a `stop` that trusted the
file would signal whatever runs under it now. So a pid is taken for ours only when its
command line is llama-server's with the port recorded, and its start time (field 22 of
/proc/PID/stat, clock ticks after boot) is the one recorded at start. The check and the
signals go through a pidfd opened first, so the process checked is the one signalled
even if the pid is reused in between. Linux only (/proc): elsewhere nothing is ours.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from pathlib import Path

from app.local_model.schemas import LocalServer

PROC = Path("/proc")
SERVER_NAME = "llama-server"


class NotOurs(Exception):
    """Why a pid is not the server `start` launched (a sentence)."""


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks after boot (field 22 of /proc/PID/stat)."""
    try:
        stat = (PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # Field 2, the command name, may hold spaces and parentheses: count after its last ")".
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[19]) if len(fields) > 19 else None


def command_line(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def check_ours(server: LocalServer) -> None:
    """NotOurs unless `server.pid` runs llama-server on the recorded port, started when
    `start` recorded it."""
    argv = command_line(server.pid)
    if argv is None:
        raise NotOurs(f"pid {server.pid} is not running (or /proc cannot show it)")
    if not _serves_port(argv, server.port):
        shown = " ".join(argv)[:120]
        raise NotOurs(f"pid {server.pid} is not {SERVER_NAME} on port {server.port}: {shown!r}")
    if server.start_ticks is None or start_ticks(server.pid) != server.start_ticks:
        raise NotOurs(
            f"pid {server.pid} runs {SERVER_NAME}, but started at another time than the "
            "one `start` recorded (an older state file, or another server)"
        )


def _serves_port(argv: list[str], port: int) -> bool:
    # An empty command line (a zombie, a kernel thread) names nothing.
    named = bool(argv) and SERVER_NAME in Path(argv[0]).name  # any suffix llama.cpp adds
    ports = [argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--port"]
    return named and ports == [str(port)]


def stop_ours(server: LocalServer, timeout: float) -> None:
    """SIGTERM to `server` if it is ours (NotOurs otherwise), SIGKILL after `timeout`;
    returns once it has exited."""
    try:
        handle = os.pidfd_open(server.pid)
    except ProcessLookupError as error:
        raise NotOurs(f"pid {server.pid} is not running") from error
    try:
        check_ours(server)  # after the pidfd: the process checked is the one signalled
        signal.pidfd_send_signal(handle, signal.SIGTERM)
        if not _exits_within(handle, timeout):
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            _exits_within(handle, None)
    except ProcessLookupError:
        pass  # it exited on its own meanwhile
    finally:
        os.close(handle)
    _reap(server.pid)


def _exits_within(handle: int, timeout: float | None) -> bool:
    """Whether the process of pidfd `handle` exits within `timeout` s (None: waits)."""
    poller = select.poll()
    poller.register(handle, select.POLLIN)  # a pidfd turns readable when its process exits
    return bool(poller.poll(None if timeout is None else timeout * 1000))


def _reap(pid: int) -> None:
    """Collect the exit status when `start` ran in this very process (tests do)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
