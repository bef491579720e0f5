"""Reading a batch request body -- a JSON object `{"items": [...], "name"?}` or JSONL, one
screening request a line -- item by item, as often as needed, without copying it whole."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails, InitErrorDetails

from app.errors import AppError
from app.intake.json_text import TOO_DEEP, nests_too_deep, parse_json
from app.intake.requests import ScreeningRequest, StorableText, plain_message

JSONL_MEDIA_TYPES = frozenset({"application/x-ndjson", "application/jsonl"})
# No Content-Type at all is read as JSON, as most clients send it.
JSON_MEDIA_TYPES = frozenset({"application/json", ""})


class BatchRejected(AppError):
    """A rejected batch, with what was wrong where (`details`) and `extra` fields: rendered
    by the one AppError handler, as every error is."""

    def __init__(
        self,
        status_code: int,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        **extra: int,
    ) -> None:
        super().__init__(status_code, code, message, extra, details=details or ())


@dataclass(slots=True)
class BatchBody:
    """The request body, read once. `media_type` is lower-case, without parameters."""

    data: bytearray
    media_type: str
    sha256: str

    @classmethod
    def of(cls, data: bytearray, content_type: str | None) -> BatchBody:
        media_type = (content_type or "").split(";")[0].strip().lower()
        return cls(data, media_type, hashlib.sha256(data).hexdigest())


@dataclass(frozen=True, slots=True)
class RawItem:
    index: int
    # 1-based line of a JSONL body; None for a JSON body.
    line: int | None
    data: Any

    def parse(self) -> ScreeningRequest:
        if isinstance(self.data, bytes | bytearray):
            if nests_too_deep(self.data):
                raise _too_deep()
            return ScreeningRequest.model_validate_json(self.data)
        return ScreeningRequest.model_validate(self.data)


def _too_deep() -> ValidationError:
    """The error pydantic gives a line it cannot parse, so it is reported like one."""
    error = InitErrorDetails(type="json_invalid", loc=(), input=b"", ctx={"error": TOO_DEEP})
    return ValidationError.from_exception_data(ScreeningRequest.__name__, [error])


class _Envelope(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    items: list[Any]
    name: StorableText | None = Field(default=None, max_length=200)


@dataclass(slots=True)
class Items:
    """The items of a body, iterable more than once without a second copy of them."""

    name: str | None
    jsonl: bytearray | None = None
    parsed: list[Any] = field(default_factory=list)

    def __iter__(self) -> Iterator[RawItem]:
        if self.jsonl is None:
            return (RawItem(i, None, data) for i, data in enumerate(self.parsed))
        return _jsonl_items(self.jsonl)

    def known_count(self) -> int | None:
        """The number of items when known before reading them (a JSON body)."""
        return None if self.jsonl is not None else len(self.parsed)


def read_items(body: BatchBody) -> Items:
    if body.media_type in JSONL_MEDIA_TYPES:
        return Items(name=None, jsonl=body.data)
    if body.media_type not in JSON_MEDIA_TYPES:
        raise AppError(
            415,
            "unsupported_media_type",
            f"send application/json or application/x-ndjson, not {body.media_type}",
        )
    return _json_items(body)


def _json_items(body: BatchBody) -> Items:
    parsed = parse_json(body.data)
    # The bytes are not needed again: free them now rather than when the request ends.
    body.data.clear()
    try:
        envelope = _Envelope.model_validate(parsed)
    except ValidationError as error:
        details = [error_detail(None, e) for e in error.errors(include_input=False)]
        summary = "; ".join(f"{d['field']}: {d['message']}" for d in details)
        raise BatchRejected(422, "validation_error", summary, details) from error
    return Items(name=envelope.name, parsed=envelope.items)


def _jsonl_items(data: bytearray) -> Iterator[RawItem]:
    """One item per non-blank line, each line copied out only when its turn comes."""
    index, line, start = 0, 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        line += 1
        text = data[start:end]
        start = end + 1
        if text.strip():
            yield RawItem(index, line, text)
            index += 1


def error_detail(item: RawItem | None, error: ErrorDetails) -> dict[str, Any]:
    if error["type"] == "json_invalid":
        where = f"line {item.line}" if item and item.line else "the item"
        why = error.get("ctx", {}).get("error")
        message = f"{where} is not valid JSON" + (f": {why}" if why else "")
        return {"field": None, "code": "malformed_json", "message": message}
    loc = ".".join(str(part) for part in error["loc"]) or None
    return {"field": loc, "code": error["type"], "message": plain_message(error)}
