"""`faithscreen mcp`: the MCP server over stdio for a local agent, talking to a server
(`--server URL --api-key KEY`) or, with none, to the embedded database and worker.

stdout carries the MCP messages and nothing else: logs go to stderr.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from app.db.migrate import upgrade_to_head
from app.mcp.connect import in_process, remote
from app.mcp.server import build_server
from app.settings import Settings


async def serve_remote(server: str, api_key: str | None) -> None:
    await build_server(remote(server, api_key)).run_stdio_async()


async def serve_embedded(settings: Settings, create_app: Callable[[Settings], FastAPI]) -> None:
    """The API app in this process, its database and worker (when the providers are
    configured), as `faithscreen screen` uses them: this user's own database, no key.
    `create_app` is app.application's, passed in by the command: the composition root
    imports app/mcp, so app/mcp does not import it."""
    upgrade_to_head(settings.database_url)
    app = create_app(settings.model_copy(update={"auth": "off"}))
    async with app.router.lifespan_context(app):
        await build_server(in_process(app, forward_key=False)).run_stdio_async()
