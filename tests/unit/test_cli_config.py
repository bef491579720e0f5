"""`faithscreen config`: the effective configuration as JSON, with every secret masked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import app.cli.config  # noqa: F401 -- registers the command on `cli`
from app.cli.root import cli

FAITHSCREEN = str(Path(sys.executable).parent / "faithscreen")
API_KEY = "sk-translator-very-secret"
DB_PASSWORD = "pg-very-secret"
ENV = {
    "FAITHSCREEN_DATABASE_URL": f"postgresql://app:{DB_PASSWORD}@db.internal:5432/faithscreen",
    "FAITHSCREEN_TRANSLATOR_BASE_URL": "https://api.openai.com/v1",
    "FAITHSCREEN_TRANSLATOR_MODEL": "gpt-4o",
    "FAITHSCREEN_TRANSLATOR_API_KEY": API_KEY,
    "FAITHSCREEN_JUDGE_BASE_URL": "http://127.0.0.1:11434/v1",
    "FAITHSCREEN_JUDGE_MODEL": "qwen2.5",
    "FAITHSCREEN_JUDGE_MAX_TOKENS": "4096",
    "FAITHSCREEN_CONFIRMATIONS": "1",
}


pytestmark = pytest.mark.usefixtures("clean_env")


def config(env: dict[str, str]) -> tuple[str, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["config"], env=env)
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads(result.stdout)


def test_config_prints_the_effective_configuration() -> None:
    _, shown = config(ENV)
    assert shown["translator"]["base_url"] == "https://api.openai.com/v1"
    assert shown["translator"]["model"] == "gpt-4o"
    assert (shown["judge"]["model"], shown["judge"]["max_tokens"]) == ("qwen2.5", 4096)
    assert (shown["confirmations"], shown["format_retries"]) == (1, 2)
    assert shown["database_url"] == "postgresql://app:***@db.internal:5432/faithscreen"


def test_config_masks_every_secret() -> None:
    text, shown = config(ENV)
    assert API_KEY not in text and DB_PASSWORD not in text
    assert shown["translator"]["api_key"] == "**********"
    assert shown["judge"]["api_key"] is None  # unset: says so, rather than a mask


def test_config_masks_credentials_in_every_url() -> None:
    env = ENV | {
        "FAITHSCREEN_DATABASE_URL": (
            "postgresql://app@db.internal/fs?Password=pw-secret&sslmode=verify-full"
            "&sslpassword=ssl-secret"
        ),
        "FAITHSCREEN_TRANSLATOR_BASE_URL": "https://gw.example/openai/v1?api-key=gw-secret",
        "FAITHSCREEN_JUDGE_BASE_URL": "https://user:basic-secret@llm.internal/v1?KEY=k-secret",
    }
    text, shown = config(env)
    for secret in ("pw-secret", "ssl-secret", "gw-secret", "basic-secret", "k-secret"):
        assert secret not in text
    assert shown["database_url"] == (
        "postgresql://app@db.internal/fs?Password=***&sslmode=verify-full&sslpassword=***"
    )
    assert shown["translator"]["base_url"] == "https://gw.example/openai/v1?api-key=***"
    assert shown["judge"]["base_url"] == "https://user:***@llm.internal/v1?KEY=***"


def test_config_with_nothing_set_shows_the_defaults() -> None:
    _, shown = config({})
    assert shown["database_url"] == "sqlite:///faithscreen.db"
    assert shown["translator"]["base_url"] is None and shown["judge"]["model"] is None


def test_the_installed_command_reads_the_environment(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAITHSCREEN_")} | ENV
    result = subprocess.run(
        [FAITHSCREEN, "config"], env=env, cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert API_KEY not in result.stdout and DB_PASSWORD not in result.stdout
    assert json.loads(result.stdout)["translator"]["model"] == "gpt-4o"
