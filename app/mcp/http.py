"""/mcp on `faithscreen serve`: the MCP server over streamable HTTP, behind the API's keys.

A request without a valid key is refused (401, the API's error shape and challenge)
before any MCP exchange, a key below submitter (a metrics key) with 403; the tools then
call the API in process with the caller's key, so every key and role check is the API's.
Stateless, with JSON responses: no MCP session outlives a request, so any replica may
answer any request.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from fastapi.security import HTTPBearer
from mcp.server.transport_security import TransportSecuritySettings
from sqlalchemy.exc import OperationalError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.auth import authenticate
from app.api.errors import app_error_response, error_response
from app.auth.errors import require_role
from app.errors import AppError
from app.mcp.connect import in_process
from app.mcp.server import build_server
from app.models.api_key import AccessRole

PATH = "/mcp"
_bearer = HTTPBearer(auto_error=False)


class KeyGuard:
    """Lets a request through to `app` only with a key of submitter or above."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await authenticate(request.app.state.runtime, await _bearer(request))
            require_role(principal, AccessRole.SUBMITTER)
        except AppError as error:  # a 401 with its challenge, a 403
            refusal = app_error_response(error)
        except OperationalError:
            refusal = error_response(503, "database_unavailable", "the database is not answering")
        else:
            await self.app(scope, receive, send)
            return
        await refusal(scope, receive, send)


def install_mcp(app: FastAPI) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Route /mcp to the MCP server; returns what the app's lifespan must run it in."""
    server = build_server(in_process(app, forward_key=True))
    streamable = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        # The SDK's DNS-rebinding check allows loopback Host headers only; a browser page
        # cannot attach the bearer key every request needs, and serve may sit behind a name.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.router.add_route(PATH, KeyGuard(streamable), include_in_schema=False)  # type: ignore[arg-type]

    @asynccontextmanager
    async def running() -> AsyncIterator[None]:
        # The session manager's task group is entered and left by a task of its own: a
        # lifespan may start and stop in two different tasks (pytest fixtures do).
        stop = asyncio.Event()
        started = asyncio.Event()

        async def hold() -> None:
            async with server.session_manager.run():
                started.set()
                await stop.wait()

        task = asyncio.create_task(hold())
        ready = asyncio.create_task(started.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            ready.cancel()
            task.result()  # it failed to start: raise why
        try:
            yield
        finally:
            stop.set()
            await task

    return running
