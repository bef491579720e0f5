"""End-to-end fixtures: a scripted provider in this process, `faithscreen serve` processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import ServeProcess, StartServe

pytestmark = pytest.mark.e2e


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def start_serve(database_url: str, tmp_path: Path) -> Iterator[StartServe]:
    """Start `faithscreen serve` processes on `database_url`; all are stopped afterwards."""
    started: list[ServeProcess] = []

    def start(env: dict[str, str], *args: str) -> ServeProcess:
        process = ServeProcess(database_url, env, tmp_path / "serve.log", *args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.kill()
