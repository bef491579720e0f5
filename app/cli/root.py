"""The `faithscreen` command. Each module in this package adds its commands to `cli`."""

from __future__ import annotations

import os
from typing import Any

import typer
from typer.core import TyperGroup

from app.cli.environment import (
    bad_setting_lines,
    ignored_judge_warning,
    is_settings_error,
    unknown_variable_warnings,
)

EXIT_BAD_SETTING = 2


class CommandGroup(TyperGroup):
    """Whichever command reads the settings, a refused value is one line per variable
    and exit 2, not a traceback."""

    # Any: typer's Context type is its own vendored click's, not importable in public.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except Exception as error:
            if not is_settings_error(error):
                raise
            for line in bad_setting_lines(error):
                typer.echo(f"faithscreen: {line}", err=True)
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
        typer.echo(f"faithscreen: warning: {warning}", err=True)
    ignored = ignored_judge_warning(os.environ)
    if ignored is not None:
        typer.echo(f"faithscreen: warning: {ignored}", err=True)
