"""Errors that carry their HTTP meaning. Services raise these; one handler renders them.

Deliberately framework-free so that services never import FastAPI.
"""

from __future__ import annotations

from collections.abc import Mapping


class AppError(Exception):
    """An error a client can act on: an HTTP status, a stable code and a message, and
    `extra` fields a client can read without parsing the message (a size `limit`, the
    `allowed` values), JSON values."""

    def __init__(
        self, status_code: int, code: str, message: str, extra: Mapping[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.extra = dict(extra or {})


class NotFound(AppError):
    def __init__(self, what: str, ident: object) -> None:
        super().__init__(404, "not_found", f"{what} {ident} does not exist")


class PayloadTooLarge(AppError):
    def __init__(
        self, field: str, limit: int, setting: str = "FAITHSCREEN_MAX_STATEMENT_BYTES"
    ) -> None:
        super().__init__(
            413,
            "payload_too_large",
            f"field '{field}' is larger than the limit of {limit} bytes ({setting})",
            extra={"limit": limit},
        )
        self.field = field


class ProviderNotConfigured(AppError):
    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            409,
            "provider_not_configured",
            "no LLM provider is configured for this request: set "
            + ", ".join(missing)
            + ", or send the replies yourself in the 'replies' field",
        )
