"""Command-line entry point: `faithscreen ...`."""

from __future__ import annotations

# Importing the command modules registers their commands on `cli`.
from app.cli import batch, config, db, evaluate, keys, parse, report, rescore, serve  # noqa: F401
from app.cli.root import cli


def main() -> None:
    cli()
