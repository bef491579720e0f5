"""The client as its own distribution: `pip install ./clients/python` into a fresh virtual
environment (no system site packages) gives `faithscreen_client` without the server (no
`app`, no FastAPI, no SQLAlchemy), and the five-line script of docs/python-client.md,
run there as written, screens a pair against a real `faithscreen serve` (keys on, the
scripted provider)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.scripted_openai import ScriptedOpenAI
from tests.support.serve_process import StartServe, provider_env

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "clients" / "python"
DOC = ROOT / "docs" / "python-client.md"
FIRST_KEY = re.compile(r"^FIRST ADMIN KEY: (fs_\S+)$", re.MULTILINE)
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# What the script names, to be pointed at the server under test.
DOC_SERVER, DOC_KEY = '"http://127.0.0.1:8000"', '"fs_..."'


@pytest.fixture
def database_url(sqlite_template: Path, tmp_path: Path) -> str:
    """SQLite only: the server's database is not what is under test here, and building the
    client's environment is this test's cost, paid once rather than once per database."""
    path = tmp_path / "faithscreen.db"
    shutil.copyfile(sqlite_template, path)
    return f"sqlite:///{path}"


def first_python_block(markdown: Path) -> str:
    found = PYTHON_BLOCK.search(markdown.read_text())
    assert found, f"no ```python block in {markdown}"
    return found[1]


def clean_environ() -> dict[str, str]:
    """This process's environment (the pip configuration too) without what would let the
    fresh environment see this one's packages or the repository."""
    hidden = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in hidden}


def run(command: list[str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=cwd, env=clean_environ(), capture_output=True, text=True, timeout=timeout
    )


def client_only_venv(tmp_path: Path) -> Path:
    """A fresh venv with `pip install ./clients/python`, from a copy of the directory: pip
    builds in the tree it is given, and build/ must not be left in the repository."""
    source = tmp_path / "clients" / "python"
    shutil.copytree(
        CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
    )
    venv = tmp_path / "venv"
    made = run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    assert made.returncode == 0, made.stderr
    installed = run([str(venv / "bin" / "pip"), "install", "-q", "./clients/python"], tmp_path)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv / "bin" / "python"


def test_the_client_installs_alone_and_its_documented_script_screens(
    start_serve: StartServe, scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    script = first_python_block(DOC)
    assert len(script.splitlines()) == 5, script
    assert first_python_block(CLIENT / "README.md") == script  # the two copies agree
    assert script.count(DOC_SERVER) == script.count(DOC_KEY) == 1, script

    python = client_only_venv(tmp_path)
    probe = (
        "import importlib.util, json, faithscreen_client; print(json.dumps(["
        "faithscreen_client.__file__, [name for name in ('app', 'fastapi', 'sqlalchemy') "
        "if importlib.util.find_spec(name)]]))"
    )
    probed = run([str(python), "-c", probe], tmp_path)
    assert probed.returncode == 0, probed.stderr
    where, server_packages = json.loads(probed.stdout)
    assert Path(where).is_relative_to(tmp_path / "venv"), where
    assert server_packages == [], f"the client's environment has {server_packages}"
    import_app = run([str(python), "-c", "import app"], tmp_path)
    assert "No module named 'app'" in import_app.stderr

    serve = start_serve(provider_env(scripted_openai.base_url, FAITHSCREEN_AUTH="on"))
    keys = FIRST_KEY.findall(serve.log.read_text())
    assert len(keys) == 1, serve.log.read_text()
    runnable = script.replace(DOC_SERVER, f'"{serve.base_url}"').replace(DOC_KEY, f'"{keys[0]}"')
    (tmp_path / "screen.py").write_text(runnable)
    screened = run([str(python), "screen.py"], tmp_path, timeout=120)
    assert screened.returncode == 0, screened.stderr
    # The scripted provider answers FAITHFUL for both roles.
    assert screened.stdout == "passed []\n"
