"""What one Lean check produced: the value stored as a `lean_checks` row."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LeanCall:
    """One `LeanClient.check()`, answered or not.

    `raw_body` is the final attempt's body exactly as received (credentials redacted when
    the status was not a success), bytes that are not UTF-8 as lone surrogates
    (`surrogateescape`: `raw_body.encode("utf-8", "surrogateescape")` gives them back);
    `http_status` None when no response came. `failure`
    says why no body could be read as an answer: "timeout" (the client's deadline),
    "connection error", "protocol error", "reply too large"; None when one came back.
    """

    server_url: str
    server_version: str | None
    snippet_id: str
    code: str
    timeout_seconds: int
    http_status: int | None
    raw_body: str | None
    failure: str | None
    error: str | None
    latency_ms: int
    attempts: int
