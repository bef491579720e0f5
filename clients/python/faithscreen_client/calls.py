"""What both clients send and how they read the answer: each API call described once as a
`Call`, each answer read once, and the retry rule. `Client` and `AsyncClient` only carry
the calls out (one blocking, one awaited)."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias, TypedDict, TypeVar, Unpack
from urllib.parse import quote

import httpx2
from pydantic import BaseModel

from faithscreen_client.credentials import mask_credentials_in_text
from faithscreen_client.errors import FaithScreenError

Model = TypeVar("Model", bound=BaseModel)
# One screening request of a batch: a mapping shaped as the body of POST /v1/screenings, or
# a pydantic model of that body (the server's own ScreeningRequest, say).
BatchItem: TypeAlias = BaseModel | Mapping[str, Any]
NDJSON = "application/x-ndjson"
# A 503 (database away, or a restart) and a refused connection are worth a retry.
RETRIED_STATUSES = frozenset({503})
DONE = "done"


@dataclass(frozen=True)
class Call:
    """One HTTP request. `idempotent`: safe to send again (a read, or a submission the
    server recognises as a repeat); other calls are retried only when nothing was sent."""

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    body: Any = None
    content: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    idempotent: bool = True


@dataclass(frozen=True)
class Backoff:
    """Up to `retries` retries, waiting `first` seconds, then twice as long each time (at
    most `cap`), with jitter; a Retry-After header of a 503 is honoured up to `cap`."""

    retries: int = 4
    first: float = 0.5
    cap: float = 8.0

    def next_delay(
        self,
        call: Call,
        attempt: int,
        error: Exception | None,
        response: httpx2.Response | None,
    ) -> float | None:
        """Seconds to wait before attempt `attempt + 1` of `call`; None: stop here."""
        if attempt >= self.retries or not retryable(call, error, response):
            return None
        after = response.headers.get("retry-after") if response is not None else None
        if after is not None and after.isdigit():
            return min(float(after), self.cap)
        base: float = min(self.first * 2**attempt, self.cap)
        return base * random.uniform(0.5, 1.0)


def retryable(call: Call, error: Exception | None, response: httpx2.Response | None) -> bool:
    """Whether this failure is worth another attempt of `call`."""
    if isinstance(error, httpx2.UnsupportedProtocol):
        return False  # a URL without http:// or https:// stays so
    if error is not None:
        # A connection never made carried nothing; anything later may have been acted on.
        return call.idempotent or isinstance(error, (httpx2.ConnectError, httpx2.ConnectTimeout))
    return response is not None and call.idempotent and response.status_code in RETRIED_STATUSES


def answer(
    base_url: str, error: Exception | None, response: httpx2.Response | None
) -> httpx2.Response:
    """The last attempt's response, or FaithScreenError when there was none."""
    if response is not None:
        return response
    assert error is not None
    raise unreachable(base_url, error) from error


def unreachable(base_url: str, error: Exception) -> FaithScreenError:
    # The URL (and the error's text, which may quote it) may carry user info.
    where = mask_credentials_in_text(f"{base_url} ({type(error).__name__}: {error})")
    return FaithScreenError(None, "unreachable", f"cannot reach {where}")


def error_of(response: httpx2.Response) -> FaithScreenError:
    """The error body ({"error": {"code", "message", "details"?}}) as a FaithScreenError;
    a body of another shape (a proxy's page) keeps its first 300 characters as message."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        error = None
    if not isinstance(error, dict):
        return FaithScreenError(response.status_code, "http_error", response.text[:300])
    details = error.get("details")
    return FaithScreenError(
        response.status_code,
        str(error.get("code", "http_error")),
        str(error.get("message", "")),
        details if isinstance(details, list) else None,
    )


def read(response: httpx2.Response, model: type[Model]) -> Model:
    if not response.is_success:
        raise error_of(response)
    try:
        return model.model_validate_json(response.content)
    except ValueError as error:  # pydantic's ValidationError is one
        raise unreadable(f"the body is not a {model.__name__}: {error}") from error


def result_line(line: bytes | str, model: type[Model]) -> Model:
    try:
        return model.model_validate(json.loads(line))
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, ValidationError
        raise unreadable(f"a results line is not a {model.__name__}: {error}") from error
    except RecursionError as error:  # nested deeper than the interpreter's stack
        raise unreadable(f"a results line is nested too deeply to read: {error}") from error


def unreadable(why: str) -> FaithScreenError:
    return FaithScreenError(None, "unreadable_answer", f"the server's answer: {why}"[:500])


class LineSplitter:
    """A stream's JSON lines, split at b"\\n" only as JSON Lines are. httpx2's
    `iter_lines` also splits at U+2028, U+0085 and other characters a JSON string may hold
    unescaped, which would cut one result into pieces that are not JSON."""

    def __init__(self) -> None:
        self._rest = b""

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completes; blank lines are skipped."""
        *lines, self._rest = (self._rest + chunk).split(b"\n")
        return [line for line in lines if line.strip()]

    def end(self) -> list[bytes]:
        """The last line, when the stream did not end with b"\\n"."""
        rest, self._rest = self._rest, b""
        return [rest] if rest.strip() else []


# ------------------------------------------------------------------ the calls themselves


class ScreeningFields(TypedDict, total=False):
    """The optional fields of one screening; None, as leaving a field out, is the server's
    default."""

    header: str | None
    external_id: str | None
    replies: Mapping[str, Any] | None
    label: str | None
    tags: Iterable[str] | None
    confirmations: int | None
    # "interactive" or "batch" (options.priority); None: the server's default (interactive).
    priority: str | None


def screening_body(informal: str, formal: str, **fields: Unpack[ScreeningFields]) -> dict[str, Any]:
    """The body of POST /v1/screenings; None fields are left out (the server's defaults)."""
    body: dict[str, Any] = {"informal": informal, "formal": formal}
    optional = {
        "header": fields.get("header"),
        "external_id": fields.get("external_id"),
        "label": fields.get("label"),
    }
    body |= {name: value for name, value in optional.items() if value is not None}
    if (replies := fields.get("replies")) is not None:
        body["replies"] = dict(replies)
    if (tags := fields.get("tags")) is not None:
        body["tags"] = list(tags)
    options = {name: fields.get(name) for name in ("confirmations", "priority")}
    if any(value is not None for value in options.values()):
        body["options"] = {name: value for name, value in options.items() if value is not None}
    return body


def submit_screening(body: Mapping[str, Any], idempotency_key: str | None = None) -> Call:
    """Always with an Idempotency-Key (a fresh one when none is given), as a batch: the
    server answers a repeat within its window with the screening stored first, so the
    submission is safe to retry."""
    key = idempotency_key or f"client-{uuid.uuid4()}"
    return Call("POST", "/v1/screenings", body=dict(body), headers={"Idempotency-Key": key})


def get_screening(screening_id: str) -> Call:
    return Call("GET", f"/v1/screenings/{_segment(screening_id)}")


def list_screenings(filters: Mapping[str, Any], cursor: str | None, limit: int) -> Call:
    params = {k: v for k, v in filters.items() if v is not None} | {"limit": limit}
    return Call("GET", "/v1/screenings", params=params | ({"cursor": cursor} if cursor else {}))


def batch_item(item: BatchItem) -> dict[str, Any]:
    if isinstance(item, BaseModel):
        return item.model_dump(mode="json", exclude_none=True)
    return dict(item)


def submit_batch(
    items: Iterable[BatchItem],
    name: str | None,
    idempotency_key: str | None,
) -> Call:
    """Always with an Idempotency-Key (a fresh one when none is given): the server then
    answers a repeat with the batch stored first, so the submission is safe to retry."""
    key = idempotency_key or f"client-{uuid.uuid4()}"
    return Call(
        "POST",
        "/v1/batches",
        params={"name": name} if name is not None else None,
        body={"items": [batch_item(item) for item in items]},
        headers={"Idempotency-Key": key},
    )


def submit_batch_jsonl(
    lines: bytes | Iterable[bytes], name: str | None, idempotency_key: str | None
) -> Call:
    """As submit_batch, with the body as JSON Lines (one request a line), sent as given:
    the same file sends the same bytes, so a repeat with its key is recognised."""
    content = lines if isinstance(lines, bytes) else b"".join(lines)
    key = idempotency_key or f"client-{uuid.uuid4()}"
    return Call(
        "POST",
        "/v1/batches",
        params={"name": name} if name is not None else None,
        content=content,
        headers={"Idempotency-Key": key, "Content-Type": NDJSON},
    )


def get_batch(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{_segment(batch_id)}")


def list_batches(cursor: str | None, limit: int) -> Call:
    params: dict[str, Any] = {"limit": limit} | ({"cursor": cursor} if cursor else {})
    return Call("GET", "/v1/batches", params=params)


def batch_results(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{_segment(batch_id)}/results")


def calibration(batch_id: str) -> Call:
    return Call("GET", f"/v1/batches/{_segment(batch_id)}/calibration")


def _segment(value: str) -> str:
    """An id as one path segment: a `/` or `?` in it cannot reach another route."""
    return quote(value, safe="")


def headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def wait_timeout(what: str, seconds: float) -> FaithScreenError:
    return FaithScreenError(None, "wait_timeout", f"{what} was not done after {seconds:g} s")
