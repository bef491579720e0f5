"""Strict-Transport-Security on every response to an https request.

A browser that has seen it once goes to this host over https only, for a year: a later
http:// link, or someone on the network answering plain http, never gets a session cookie
sent in clear. Over plain http the header means nothing (browsers ignore it), so it is
only sent where the request was https as uvicorn saw it (X-Forwarded-Proto counts only
from FAITHSCREEN_FORWARDED_ALLOW_IPS). Not `includeSubDomains`: other hosts under the
same domain are not ours to decide for.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HSTS_HEADER = "Strict-Transport-Security"
HSTS_VALUE = "max-age=31536000"


class StrictTransportSecurity:
    """Pure ASGI: the body passes through untouched, streamed responses included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("scheme") != "https":
            await self.app(scope, receive, send)
            return

        async def send_with_hsts(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message).setdefault(HSTS_HEADER, HSTS_VALUE)
            await send(message)

        await self.app(scope, receive, send_with_hsts)
