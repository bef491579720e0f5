"""Command-line entry point: `faithscreen ...`."""

from __future__ import annotations

# Importing the command modules registers their commands on `cli`.
from app.cli import (  # noqa: F401
    batch,
    config,
    db,
    evaluate,
    keys,
    mcp,
    parse,
    providers,
    report,
    rescore,
    screen,
    serve,
)
from app.cli.root import cli


def main() -> None:
    cli()
