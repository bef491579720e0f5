"""Command-line entry point: `faithscreen ...`.

Each command's module is imported when that command runs (see `root.COMMAND_MODULES`):
`faithscreen keys create` does not pay for the API app, the MCP SDK or the batch client.
"""

from __future__ import annotations

from app.cli.root import cli


def main() -> None:
    cli()
