"""The `faithscreen` command. Each module in this package adds its commands to `cli`."""

from __future__ import annotations

import typer

cli = typer.Typer(
    name="faithscreen",
    help="Screen informal/Lean 4 statement pairs for faithfulness.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@cli.callback()
def root() -> None:
    """Screen informal/Lean 4 statement pairs for faithfulness."""
