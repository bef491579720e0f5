"""A deadline on each request's arrival, for `faithscreen serve`.

uvicorn bounds the idle time between requests (timeout_keep_alive) and the size of the
headers, but not the time a request takes to arrive: a client sending a byte a second
holds its connection, and whatever the application allotted to it, for as long as it
likes. Here a request's headers and body must be in within FAITHSCREEN_CLIENT_TIMEOUT_SECONDS
of its first byte (of the connection opening, for its first request). Trickling does not
move the deadline; what the application does once the request is in does not count.

Past the deadline the connection is closed, after a 408 in the one error shape when no
response has begun. An application still waiting for the body then sees the client gone
(Starlette's ClientDisconnect), which the error handlers answer without a 5xx.

uvicorn's h11 protocol is used whether or not httptools is installed: this class tells
from h11's state, a public part of h11, where each request begins and ends.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.api.errors import error_response


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on each request's arrival."""

    client_timeout_seconds = 30.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._start_deadline()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # A pipelined request may have begun while the response was written.
        self._follow_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_deadline()
        super().connection_lost(exc)

    def _follow_request(self) -> None:
        """Start the clock when a request's first byte is in; stop it once all of it is."""
        their_state = self.conn.their_state
        receiving = their_state is h11.SEND_BODY or (
            their_state is h11.IDLE and bool(self.conn.trailing_data[0])
        )
        if not receiving:
            self._stop_deadline()
        elif self._deadline is None:
            self._start_deadline()

    def _start_deadline(self) -> None:
        self._deadline = self.loop.call_later(self.client_timeout_seconds, self._expire)

    def _stop_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        if self.cycle is None or not self.cycle.response_started:
            self.transport.write(_timed_out(self.client_timeout_seconds))
        self.transport.close()


def _timed_out(seconds: float) -> bytes:
    """A 408 framed by a connection of its own: the live one's state stays the
    application's, so a response it may still try to send is dropped, not an error."""
    response = error_response(
        408,
        "request_timeout",
        f"the request did not arrive within {seconds:g} s (FAITHSCREEN_CLIENT_TIMEOUT_SECONDS)",
        headers={"connection": "close"},
    )
    framing = h11.Connection(h11.SERVER)
    head = h11.Response(status_code=408, headers=response.raw_headers, reason=b"Request Timeout")
    return (
        framing.send(head)
        + framing.send(h11.Data(data=bytes(response.body)))
        + framing.send(h11.EndOfMessage())
    )


def deadline_protocol(seconds: float) -> type[DeadlineProtocol]:
    """The protocol class to give uvicorn (`http=`), with this deadline."""
    return type("DeadlineProtocol", (DeadlineProtocol,), {"client_timeout_seconds": seconds})
