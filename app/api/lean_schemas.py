"""A screening's Lean check as the API shows it (app/lean, docs/lean.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.models.lean_check import LeanCheck
from app.outside_text import without_lone_surrogates
from app.vocabulary import LEAN_NOT_CHECKED, LeanStatus

LEAN_STATUS_DOC = (
    "What the Lean server said of `header + formal`: `ok` (it elaborates), `error` (a "
    "message of severity error: flagged, `lean_error`), `timeout` or `unavailable` (no "
    f"usable answer: needs_review, `lean_unavailable`); `{LEAN_NOT_CHECKED}` when no Lean "
    "server was configured (FAITHSCREEN_LEAN_SERVER_URL) or it has not answered yet."
)
LeanStatusShown = Literal["ok", "error", "timeout", "unavailable", "not_checked"]


class LeanMessageOut(BaseModel):
    severity: str
    line: int = Field(description="1-based, in `code`")
    column: int = Field(description="0-based, in `code`")
    end_line: int | None
    end_column: int | None
    data: str


class LeanCheckOut(BaseModel):
    status: LeanStatus
    server_url: str
    server_version: str | None
    code: str = Field(description="The snippet sent: the header, a newline, the formal.")
    timeout_seconds: int
    http_status: int | None
    messages: list[LeanMessageOut]
    goal: str | None = Field(description="The elaborated goal of the statement's sorry.")
    detail: str | None = Field(description="Why the status is not ok or error.")
    reader_version: str | None = Field(
        default=None,
        description="The reader that read `raw_body` into this status (`lean-1`, `lean-2`, "
        "...; docs/lean.md). A re-score reads the body again under the current reader and "
        "never changes this stored check.",
    )
    error: str | None
    raw_body: str | None = Field(description="The server's body exactly as received.")
    latency_ms: int | None
    attempts: int
    created_at: datetime

    @classmethod
    def of(cls, row: LeanCheck) -> LeanCheckOut:
        shown = _shown
        return cls(
            status=row.status,
            server_url=row.server_url,
            server_version=shown(row.server_version),
            code=row.code,
            timeout_seconds=row.timeout_seconds,
            http_status=row.http_status,
            messages=[LeanMessageOut(**_shown_message(m)) for m in row.messages],
            goal=shown(row.goal),
            detail=shown(row.detail),
            reader_version=row.reader_version,
            error=shown(row.error),
            raw_body=shown(row.raw_body),
            latency_ms=row.latency_ms,
            attempts=row.attempts,
            created_at=row.created_at,
        )


def lean_fields(row: LeanCheck | None) -> dict[str, Any]:
    """A screening's `lean_status` and `lean_check`."""
    if row is None:
        return {"lean_status": LEAN_NOT_CHECKED, "lean_check": None}
    return {"lean_status": row.status.value, "lean_check": LeanCheckOut.of(row)}


def _shown(text: str | None) -> str | None:
    return None if text is None else without_lone_surrogates(text)


def _shown_message(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "data": without_lone_surrogates(str(message.get("data", "")))}
