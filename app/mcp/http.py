"""/mcp on `faithscreen serve`: the MCP server over streamable HTTP, behind the API's keys.

A request without a valid key is refused (401, the API's error shape and challenge)
before any MCP exchange, a key below submitter (a metrics key) with 403; the tools then
call the API in process with the caller's key, so every key and role check is the API's.
Stateless, with JSON responses: no MCP session outlives a request, so any replica may
answer any request. The MCP SDK is imported (in a thread, not blocking the event loop)
and the server built at the first request to /mcp: a serve that is never asked for MCP
does not pay the SDK's seconds of imports at start-up.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI
from fastapi.security import HTTPBearer
from sqlalchemy.exc import OperationalError
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.auth import authenticate
from app.api.errors import app_error_response, error_response
from app.auth.errors import require_role
from app.errors import AppError
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
            principal = await authenticate(
                request, request.app.state.runtime, await _bearer(request)
            )
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
    mount = LazyMcp(app)
    app.router.add_route(PATH, KeyGuard(mount), include_in_schema=False)  # type: ignore[arg-type]
    return mount.running


class LazyMcp:
    """The MCP server's ASGI app, built at its first request; its session manager runs
    from then until the app's lifespan ends."""

    def __init__(self, app: FastAPI) -> None:
        self.fastapi = app
        self.streamable: ASGIApp | None = None
        self.task: asyncio.Task[None] | None = None
        self.stop: asyncio.Event | None = None
        self.lock: asyncio.Lock | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.streamable is None:
            self.lock = self.lock or asyncio.Lock()
            async with self.lock:
                if self.streamable is None:
                    self.streamable = await self._start()
        await self.streamable(scope, receive, send)

    async def _start(self) -> ASGIApp:
        await asyncio.to_thread(importlib.import_module, "app.mcp.connect")
        from mcp.server.transport_security import TransportSecuritySettings

        from app.mcp.connect import in_process
        from app.mcp.server import build_server

        server = build_server(in_process(self.fastapi, forward_key=True))
        streamable = server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            # The SDK's DNS-rebinding check allows loopback Host headers only; a browser
            # page cannot attach the bearer key every request needs, and serve may sit
            # behind a name.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        # The session manager's task group is entered and left by a task of its own: the
        # request that builds it ends long before the server does.
        stop = self.stop = asyncio.Event()
        started = asyncio.Event()

        async def hold() -> None:
            async with server.session_manager.run():
                started.set()
                await stop.wait()

        task = self.task = asyncio.create_task(hold())
        ready = asyncio.create_task(started.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            ready.cancel()
            self.task = None
            task.result()  # it failed to start: raise why
        return streamable

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if self.stop is not None and self.task is not None:
                self.stop.set()
                await self.task
            self.streamable, self.task, self.stop, self.lock = None, None, None, None
