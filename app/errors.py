"""Errors that carry their HTTP meaning. Services raise these; one handler renders them.

Deliberately framework-free so that services never import FastAPI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


class AppError(Exception):
    """An error a client can act on: an HTTP status, a stable code and a message, and
    `extra` fields a client can read without parsing the message (a size `limit`, the
    `allowed` values), JSON values.

    `details` says what was wrong where (a refused batch's items, each a JSON object), sent
    as the error's "details" when there are any; `headers` go with the response (a 401's
    challenge). `field` names the request field the error is about, for a caller that lists
    errors by field (a batch's items): it is not sent, the message names the field for people.
    """

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        extra: Mapping[str, object] | None = None,
        *,
        details: Sequence[Mapping[str, Any]] = (),
        headers: Mapping[str, str] | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.code = code
        self.message = message
        self.extra = dict(extra or {})
        self.details = [dict(detail) for detail in details]
        self.headers = dict(headers or {})
        self.field = field


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
            field=field,
        )


class ProviderNotConfigured(AppError):
    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            409,
            "provider_not_configured",
            "no LLM provider is configured for this request: set "
            + ", ".join(missing)
            + " in the environment of the process that screens (the server's, not an API"
            " client's), or send the replies yourself in the 'replies' field",
            field="replies",
        )
