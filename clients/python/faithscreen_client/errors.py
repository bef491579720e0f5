"""The one exception the client raises: what the server answered, or why nothing was."""

from __future__ import annotations

from typing import Any


class FaithScreenError(Exception):
    """An error answer (`status`, and the body's `code`, `message`, `details`), or no
    error answer: `status` None with code `unreachable` (the server could not be reached,
    after the retries), `wait_timeout` (a wait ran out before the work was done) or
    `unreadable_answer` (a success whose body or results line is not what the API
    writes)."""

    def __init__(
        self,
        status: int | None,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}" if status is None else f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or []
