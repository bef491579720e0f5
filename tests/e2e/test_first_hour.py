"""What a new user trips over in the first hour, each on the path they took: real
`faithscreen` processes (`serve`, `screen`, `submit`, `eval run`, `config`, `--help`)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.e2e.test_cli_batch import faithscreen

pytestmark = pytest.mark.e2e


def test_serve_on_a_port_in_use_is_one_line_and_exit_1_with_nothing_started(
    tmp_path: Path,
) -> None:
    database = tmp_path / "never-made.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {"FAITHSCREEN_DATABASE_URL": f"sqlite:///{database}"}
        done = faithscreen(env, "serve", "--host", "127.0.0.1", "--port", str(port), timeout=60)
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert f"port {port}" in line and "--port" in line, line
    assert done.stdout == ""  # no first admin key announced
    assert not database.exists()  # no migration ran
