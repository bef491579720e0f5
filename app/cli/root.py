"""The `faithscreen` command. Each module in this package adds its commands to `cli`."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable
from typing import Any

import typer
import typer.main
from typer.core import TyperGroup

from app.cli.environment import (
    bad_setting_lines,
    ignored_judge_warning,
    is_settings_error,
    unknown_variable_warnings,
)
from app.cli.terminal import echo

EXIT_BAD_SETTING = 2

# Which module of this package registers each command on `cli`, in the order `--help`
# lists them. A command's module is imported only when that command is asked for.
COMMAND_MODULES = {
    "submit": "batch",
    "config": "config",
    "db": "db",
    "eval": "evaluate",
    "keys": "keys",
    "local-model": "local_model",
    "mcp": "mcp",
    "parse": "parse",
    "providers": "providers",
    "report": "report",
    "rescore": "rescore",
    "screen": "screen",
    "serve": "serve",
    "worker": "serve",
}


class CommandGroup(TyperGroup):
    """Whichever command reads the settings, a refused value is one line per variable
    and exit 2, not a traceback. Commands are loaded on first use (COMMAND_MODULES)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            self._load([COMMAND_MODULES[cmd_name]])
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: Any) -> list[str]:
        self._load(dict.fromkeys(COMMAND_MODULES.values()))
        return super().list_commands(ctx)

    def _load(self, modules: Iterable[str]) -> None:
        """Import the modules, then take every command from `cli` as typer builds it now,
        in the order they were registered (a command already in use keeps its object)."""
        for module in modules:
            importlib.import_module(f"{__package__}.{module}")
        built = typer.main.get_command(cli)
        assert isinstance(built, TyperGroup)
        self.commands = {
            name: self.commands.get(name, command) for name, command in built.commands.items()
        }

    # Any: typer's Context type is its own vendored click's, not importable in public.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as error:
            if not is_settings_error(error):
                raise
            for line in bad_setting_lines(error):
                echo(f"faithscreen: {line}", err=True)
            raise typer.Exit(EXIT_BAD_SETTING) from None


cli = typer.Typer(
    name="faithscreen",
    help="Screen informal/Lean 4 statement pairs for faithfulness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain click help: typer's rich panels print a `<bool>` metavar after every flag
    # (`--wait <bool>`, even `--help <bool>`), as if it took a value. Sub-apps inherit it.
    rich_markup_mode=None,
    cls=CommandGroup,
)


@cli.callback()
def root() -> None:
    """Screen informal/Lean 4 statement pairs for faithfulness."""
    for warning in unknown_variable_warnings(os.environ):
        echo(f"faithscreen: warning: {warning}", err=True)
    ignored = ignored_judge_warning(os.environ)
    if ignored is not None:
        echo(f"faithscreen: warning: {ignored}", err=True)
