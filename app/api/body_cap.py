"""A cap on every request body, enforced while the body is read.

The ASGI middleware counts the bytes each `receive` hands the application and refuses the
body (413 `body_too_large`, naming its limit) as soon as the count, or the Content-Length
the client declared, passes the cap: a body is never read whole before it is judged.

The cap is FAITHSCREEN_MAX_REQUEST_BYTES unless the handler that reads the body names its
own first (`cap_body`: batches take more, the sign-in form far less). Nothing is counted
until a handler reads, so a request refused before its body is wanted (a 401) is answered
from its headers alone, whatever Content-Length it declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import AppError

SCOPE_KEY = "faithscreen.body_budget"


@dataclass(frozen=True, slots=True)
class BodyCap:
    limit: int
    # What a 413 tells the client: the limit, and where it is set.
    message: str


class BodyTooLarge(AppError):
    def __init__(self, cap: BodyCap) -> None:
        super().__init__(413, "body_too_large", cap.message, {"limit": cap.limit})


def request_cap(limit: int) -> BodyCap:
    return BodyCap(
        limit,
        f"a request body holds at most {limit} bytes (FAITHSCREEN_MAX_REQUEST_BYTES)",
    )


@dataclass(slots=True)
class _Budget:
    cap: BodyCap
    declared: int
    read: int = 0

    def check(self) -> None:
        if max(self.declared, self.read) > self.cap.limit:
            raise BodyTooLarge(self.cap)


class CappedBodies:
    """ASGI middleware: every HTTP request body held to `cap`, or to its handler's own."""

    def __init__(self, app: ASGIApp, cap: BodyCap) -> None:
        self.app = app
        self.cap = cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        budget = _Budget(self.cap, _declared_length(scope))
        scope[SCOPE_KEY] = budget

        async def counted() -> Message:
            budget.check()  # a declared length past the cap: refused before a byte is read
            message = await receive()
            if message["type"] == "http.request":
                budget.read += len(message.get("body", b""))
                budget.check()
            return message

        await self.app(scope, counted, send)


def cap_body(request: Request, cap: BodyCap) -> None:
    """This request's body is held to `cap` (call it before reading the body)."""
    budget: _Budget = request.scope[SCOPE_KEY]
    budget.cap = cap
    budget.check()


def _declared_length(scope: Scope) -> int:
    declared = Headers(scope=scope).get("content-length", "")
    # Anything but digits is not a length (h11 refuses such requests before they get here);
    # past 18 digits, no conversion is needed to know it is past every cap.
    if not (declared.isascii() and declared.isdigit()):
        return 0
    return int(declared) if len(declared) <= 18 else 10**18
