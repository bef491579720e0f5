"""A Python client for the FaithScreen API, blocking (`Client`) or awaited (`AsyncClient`,
the same methods).

    from faithscreen_client import Client, FaithScreenError

    with Client("http://127.0.0.1:8000", api_key="fs_...") as client:
        screening = client.screen("For every n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n")
        print(screening.outcome, screening.reasons)

Constructor: `Client(base_url, api_key=None, *, timeout=30.0, backoff=Backoff(),
poll_seconds=1.0, transport=None, allow_insecure_http=False)`; `transport` is httpx2's (an
`ASGITransport` reaches an app in process). Use it as a context manager, or call `close()`
(`aclose()` awaited). With an `api_key`, a plain `http://` URL must name a loopback host
(localhost, 127.0.0.0/8, [::1]): elsewhere the key would cross the network in clear text,
and the constructor raises FaithScreenError `insecure_http` unless
`allow_insecure_http=True`, which warns (`InsecureHttpWarning`) instead.

Screenings
    screen(informal, formal, *, header=None, external_id=None, replies=None, label=None,
           tags=None, confirmations=None, priority=None, idempotency_key=None, wait=True,
           timeout=600.0) -> Screening
        Submit one pair. With `wait`, poll every `poll_seconds` until it is done (at most
        `timeout` seconds, then FaithScreenError `wait_timeout`); without, the screening
        as stored at once (queued, or done when `replies` were supplied). The same
        `idempotency_key` sent again (within the server's window) gets the screening
        stored first; without one the client makes one, so its own retries are repeats.
        `priority`: "batch" to let interactive work go first (default "interactive").
    wait_screening(id, *, timeout=600.0) -> Screening
    get_screening(id) -> Screening           the outcome, reasons, evidence, every review
    list_screenings(*, external_id=None, outcome=None, status=None, page_size=100)
        -> iterator of ScreeningListed, newest first, following every page.

Batches
    submit_batch(items, *, name=None, idempotency_key=None) -> Batch
        `items`: dicts shaped as the body of POST /v1/screenings, or pydantic models.
        Without a key the client makes one, so a retried submission is recognised by
        the server as a repeat (the batch stored first), never screened twice.
    submit_batch_jsonl(lines, *, name=None, idempotency_key=None) -> Batch
        The same, the items as JSON Lines bytes, sent as given (what `faithscreen submit`
        sends: the same file, the same bytes, so its default key finds the same batch).
    get_batch(id) -> Batch                   progress: done, outcomes, parse statuses
    list_batches(*, page_size=100) -> iterator of BatchListed
    wait_batch(id, *, timeout=None, on_progress=None) -> Batch
        Poll until every item is done; `on_progress(batch)` after each poll.
    batch_results(id) -> iterator of BatchResult, streamed in submission order
    batch_result_lines(id) -> iterator of the stream's raw JSON lines (bytes)
    calibration(id) -> Calibration           the batch's error rates on labelled pairs

The returned values are pydantic models of the API's response bodies
(faithscreen_client/models.py, calibration.py): `Screening` (with its `Review`s and
`Evidence`), `ScreeningListed`, `Batch`, `BatchListed`, `BatchResult`, `Calibration`.
They mirror the server's OpenAPI document field for field; a field a newer server adds is
ignored.

Errors: every failure is a `FaithScreenError` with `status` (the HTTP status; None when
no error answer came), `code` (the API's error code, e.g. `not_found`, `validation_error`;
`unreachable`, `wait_timeout` without an answer, `unreadable_answer` for a body or a
results line that is not what the API writes), `message` and `details` (one entry per
invalid field or batch item). Reads and submissions (each sent with an Idempotency-Key,
so the server recognises a repeat) are retried on connection errors and 503 with
exponential backoff (`Backoff(retries=4, first=0.5, cap=8.0)`, a Retry-After honoured).
"""

from __future__ import annotations

from faithscreen_client.asynchronous import AsyncClient
from faithscreen_client.calibration import Calibration
from faithscreen_client.calls import Backoff
from faithscreen_client.errors import FaithScreenError
from faithscreen_client.models import (
    Batch,
    BatchListed,
    BatchResult,
    Evidence,
    Review,
    Screening,
    ScreeningListed,
)
from faithscreen_client.plain_http import InsecureHttpWarning
from faithscreen_client.sync import Client

__all__ = [
    "AsyncClient",
    "Backoff",
    "Batch",
    "BatchListed",
    "BatchResult",
    "Calibration",
    "Client",
    "Evidence",
    "FaithScreenError",
    "InsecureHttpWarning",
    "Review",
    "Screening",
    "ScreeningListed",
]
