"""`faithscreen local-model stop` signals only the llama-server `start` launched: a pid the
state file names is checked first (its command line is llama-server's with the recorded
port, its start time the recorded one). Real processes: an unrelated `sleep`, and a
stand-in llama-server (the Python interpreter run under that name), since building the
real one takes minutes (tests/e2e/test_real_model.py stops the real one)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.local_model import service
from app.local_model.process import start_ticks
from app.local_model.schemas import LocalServer

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
PORT = 8091
SLEEP = "import time; time.sleep(300)"


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def launch(started: list[subprocess.Popen[bytes]], argv: list[str]) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(argv)
    started.append(process)
    return process


def stand_in_server(
    tmp_path: Path, started: list[subprocess.Popen[bytes]], port: int
) -> subprocess.Popen[bytes]:
    """A process whose command line reads `.../llama-server -c ... --port PORT`."""
    name = tmp_path / "bin" / "llama-server"
    name.parent.mkdir(exist_ok=True)
    name.symlink_to(sys.executable)
    return launch(started, [str(name), "-c", SLEEP, "--port", str(port)])


def record(home: Path, pid: int, ticks: int | None) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    state = home / service.STATE_FILE
    server = LocalServer(pid=pid, port=PORT, model="smollm2-135m-instruct", start_ticks=ticks)
    state.write_text(server.model_dump_json())
    return state


def stop(home: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["local-model", "stop", "--home", str(home)])
    return result.exit_code, result.stderr


def wait_for_command_line(pid: int, name: str) -> None:
    """Until the child has exec'd (its /proc cmdline names `name`), with a deadline."""
    for _ in range(1000):
        if name.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
            return
        subprocess.run(["true"], check=True)  # yields the CPU without sleeping a fixed time
    raise AssertionError(f"pid {pid} never ran {name}")


def test_stop_leaves_an_unrelated_process_alone(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    sleeper = launch(processes, ["sleep", "300"])
    wait_for_command_line(sleeper.pid, "sleep")
    state = record(tmp_path, sleeper.pid, start_ticks(sleeper.pid))  # even its true start
    assert service.running(tmp_path) is None  # status does not take it for the server
    code, said = stop(tmp_path)
    assert code == 1
    assert f"pid {sleeper.pid} is not llama-server on port {PORT}" in said
    assert "not signalled" in said and "cleared" in said
    assert sleeper.poll() is None  # still running
    assert not state.exists()


@pytest.mark.parametrize("recorded", ["another start time", "no start time", "another port"])
def test_stop_leaves_a_llama_server_it_cannot_tell_for_its_own_alone(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]], recorded: str
) -> None:
    server = stand_in_server(tmp_path, processes, PORT + 1 if recorded == "another port" else PORT)
    wait_for_command_line(server.pid, "--port")
    ticks = start_ticks(server.pid)
    assert ticks is not None
    written = {"another start time": ticks - 1, "no start time": None}.get(recorded, ticks)
    state = record(tmp_path / "home", server.pid, written)
    code, said = stop(tmp_path / "home")
    assert code == 1 and "not signalled" in said, said
    assert server.poll() is None
    assert not state.exists()


def test_stop_stops_the_server_start_recorded(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    server = stand_in_server(tmp_path, processes, PORT)
    wait_for_command_line(server.pid, "--port")
    state = record(tmp_path / "home", server.pid, start_ticks(server.pid))
    assert service.running(tmp_path / "home") is not None
    code, said = stop(tmp_path / "home")
    assert code == 0 and f"stopped pid {server.pid}" in said, said
    server.wait(timeout=30)  # stop reaped its own child: this ends at once, or times out
    assert not Path(f"/proc/{server.pid}").exists()
    assert not state.exists()


def test_stop_with_no_state_says_so(tmp_path: Path) -> None:
    code, said = stop(tmp_path)
    assert code == 0 and "no local model server was running" in said


def test_the_start_time_is_read_past_a_name_with_spaces_and_parentheses(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    odd = tmp_path / "a b) (c"
    odd.symlink_to(sys.executable)
    process = launch(processes, [str(odd), "-c", SLEEP])
    wait_for_command_line(process.pid, "a b) (c")
    ticks = start_ticks(process.pid)
    fields = Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    assert ticks == int(fields[19]) and ticks >= start_ticks(1)  # type: ignore[operator]


def test_a_pid_with_an_empty_command_line_is_not_ours(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """A zombie (or a kernel thread) has an empty /proc/PID/cmdline: it names no server,
    and neither `status` nor `stop` may fail on it (an IndexError before)."""
    exited = launch(processes, ["true"])
    for _ in range(1000):  # exited, and left unreaped: a zombie
        if Path(f"/proc/{exited.pid}/cmdline").read_bytes() == b"":
            break
        subprocess.run(["true"], check=True)
    else:
        raise AssertionError(f"pid {exited.pid} never became a zombie")
    record(tmp_path, exited.pid, start_ticks(exited.pid))
    assert service.running(tmp_path) is None
    code, said = stop(tmp_path)
    assert code == 1 and f"pid {exited.pid} is not llama-server" in said
