"""With FAITHSCREEN_AUTH=off, only requests addressed to this machine are answered.

Auth off makes every caller an admin, and `serve` then binds only to loopback. That alone
does not keep other sites out: a page on attacker.example can re-point its own name at
127.0.0.1 (DNS rebinding) and have the browser send `POST /v1/keys` there, with
`Host: attacker.example`. So every request must name this machine in its Host header
(localhost, 127.0.0.0/8 or [::1], with or without a port), and an Origin header, when a
browser sends one, must be a page of this machine too. Anything else is a 403 in the
shared error shape, saying what to fix.

The ASGI middleware wraps the whole app as `faithscreen serve` puts it on a socket
(app.application.create_served_app): /v1, /mcp, /review and the rest alike. Callers in the
process (the MCP bridge, tests) send no request over a network and reach the app inside.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.errors import app_error_response
from app.errors import AppError
from faithscreen_client.loopback import host_of_header, is_loopback_host, is_loopback_origin

# An echoed header is the caller's text: shown, but never at length.
_SHOWN = 80
_FIX = (
    "FAITHSCREEN_AUTH=off makes every caller an admin, so this server answers only requests "
    "addressed to this machine: open it as http://127.0.0.1:PORT or http://localhost:PORT "
    "(or turn auth on and use API keys)"
)


class ForeignHost(AppError):
    def __init__(self, host: str | None) -> None:
        named = f"Host {host[:_SHOWN]!r}" if host else "no Host header"
        super().__init__(403, "host_not_loopback", f"refused {named}: {_FIX}")


class ForeignOrigin(AppError):
    def __init__(self, origin: str) -> None:
        super().__init__(
            403, "origin_not_loopback", f"refused a request from Origin {origin[:_SHOWN]!r}: {_FIX}"
        )


def refusal(headers: Headers) -> AppError | None:
    """Why a request with these headers may not reach an auth-off app; None: it may."""
    host = headers.get("host")
    if host is None or not is_loopback_host(host_of_header(host)):
        return ForeignHost(host)
    origin = headers.get("origin")
    if origin is not None and not is_loopback_origin(origin):
        return ForeignOrigin(origin)
    return None


class LoopbackOnly:
    """ASGI middleware: HTTP requests whose Host (and Origin, if any) is not this machine
    are answered 403 before the app sees them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            error = refusal(Headers(scope=scope))
            if error is not None:
                await _refuse(error, scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _refuse(error: AppError, scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})  # policy violation
        return
    await app_error_response(error)(scope, receive, send)
