"""How a tool call reaches the API: the three `Connect`s of app.mcp.server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

import httpx2
from mcp.server.mcpserver import Context
from starlette.types import ASGIApp

from app.mcp.server import Connect
from faithscreen_client import AsyncClient, Backoff

IN_PROCESS_URL = "http://faithscreen.in-process"
POLL_SECONDS = 0.5
# In process there is no connection to lose: a 503 is the database, and the agent retries.
NO_RETRY = Backoff(retries=0)


def remote(server: str, api_key: str | None) -> Connect:
    """A FaithScreen server elsewhere (`faithscreen mcp --server URL --api-key KEY`)."""

    @asynccontextmanager
    async def connect(_: Context) -> AsyncIterator[AsyncClient]:
        async with AsyncClient(server, api_key, poll_seconds=POLL_SECONDS) as client:
            yield client

    return connect


def in_process(app: ASGIApp, *, forward_key: bool) -> Connect:
    """The API app in this process. `forward_key`: each call carries the key its MCP
    request came with (/mcp on `faithscreen serve`), so the API's own key and role checks
    decide; without it, no key (the embedded app of `faithscreen mcp`, auth off)."""

    @asynccontextmanager
    async def connect(ctx: Context) -> AsyncIterator[AsyncClient]:
        key = bearer_key(ctx.headers) if forward_key else None
        transport = httpx2.ASGITransport(app=app)
        client = AsyncClient(
            IN_PROCESS_URL, key, transport=transport, backoff=NO_RETRY, poll_seconds=POLL_SECONDS
        )
        async with client:
            yield client

    return connect


def bearer_key(headers: Mapping[str, str] | None) -> str | None:
    scheme, _, key = (headers or {}).get("authorization", "").partition(" ")
    return key.strip() or None if scheme.lower() == "bearer" else None
