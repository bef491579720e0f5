"""`faithscreen mcp`: an MCP server over stdio for a local agent (see app/mcp/stdio.py)."""

from __future__ import annotations

from typing import Annotated

import anyio
import typer

from app.cli.batch import CommandFailed, fail_command, refuse_plain_key
from app.cli.db import announce_database
from app.cli.environment import API_KEY_ENV
from app.cli.root import cli
from app.observability.logging import configure_logging
from app.settings import get_settings


@cli.command("mcp")
def mcp_command(
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            help="A FaithScreen server, e.g. http://127.0.0.1:8000 (default: none, "
            "the embedded database and worker).",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            envvar=API_KEY_ENV,
            show_envvar=True,
            help="A submitter key for --server, sent as a Bearer token.",
        ),
    ] = None,
) -> None:
    """Serve the MCP tools (screen_pair, get_screening, read_reply, explain_reason) over
    stdio for a local agent.

    With --server, every tool call goes to that server with --api-key. Without, to the
    embedded database (FAITHSCREEN_DATABASE_URL, else ./faithscreen.db) and its worker.
    """
    # Imported here: the MCP SDK and the app it serves take seconds to import, which every
    # other command (and every test starting one) would pay for nothing.
    from app.application import create_app
    from app.mcp.stdio import serve_embedded, serve_remote

    if server is not None:
        try:
            refuse_plain_key(server, api_key)
        except CommandFailed as error:
            fail_command("mcp", error)
        anyio.run(serve_remote, server, api_key)
        return
    settings = get_settings()
    configure_logging(json=settings.log_format == "json")  # to stderr: stdout is MCP's
    announce_database(settings.database_url)  # on stderr, as every command that opens one
    anyio.run(serve_embedded, settings, create_app)
