"""`faithscreen` imports a command's module only when that command runs: a CLI process
spends most of its life importing, and `keys create` must not pay for the API app."""

from __future__ import annotations

import subprocess
import sys

import typer.main
from typer.core import TyperGroup

from app.cli.root import COMMAND_MODULES, cli

HEAVY = ("app.application", "aiohttp", "mcp", "app.intake.batches", "app.cli.batch")


def modules_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after `faithscreen ARGV` (exit code ignored)."""
    program = (
        "import sys\n"
        "from app.cli.root import cli\n"
        "try:\n"
        f"    cli({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    return set(done.stdout.split())


def test_a_command_loads_its_own_module_and_not_the_api_app() -> None:
    loaded = modules_after("keys", "--help")
    assert "app.cli.keys" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_help_loads_every_command() -> None:
    loaded = modules_after("--help")
    assert {f"app.cli.{module}" for module in COMMAND_MODULES.values()} <= loaded


def test_every_registered_command_has_a_module_named_for_it_and_no_other_is_named() -> None:
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        __import__(f"app.cli.{module}")
    built = typer.main.get_command(cli)
    assert isinstance(built, TyperGroup)
    assert set(built.commands) == set(COMMAND_MODULES)


def test_the_app_imports_the_mcp_sdk_only_when_mcp_is_first_asked_for() -> None:
    program = "import sys, app.application\nprint('\\n'.join(sys.modules))\n"
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(done.stdout.split())
    assert "app.application" in loaded
    assert not {m for m in loaded if m == "mcp" or m.startswith("mcp.")}
