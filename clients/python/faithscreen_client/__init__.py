"""A Python client for the FaithScreen API, blocking (`Client`) or awaited (`AsyncClient`,
the same methods).

    from faithscreen_client import Client, FaithScreenError

    with Client("http://127.0.0.1:8000", api_key="fs_...") as client:
        screening = client.screen("For every n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n")
        print(screening.outcome, screening.reasons)

Constructor: `Client(base_url, api_key=None, *, timeout=30.0, backoff=Backoff(),
poll_seconds=1.0, transport=None)`; `transport` is httpx2's (an `ASGITransport` reaches an
app in process). Use it as a context manager, or call `close()` (`aclose()` awaited).

Screenings
    screen(informal, formal, *, header=None, external_id=None, replies=None, label=None,
           tags=None, confirmations=None, wait=True, timeout=600.0) -> Screening
        Submit one pair. With `wait`, poll every `poll_seconds` until it is done (at most
        `timeout` seconds, then FaithScreenError `wait_timeout`); without, the screening
        as stored at once (queued, or done when `replies` were supplied).
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
no answer came), `code` (the API's error code, e.g. `not_found`, `validation_error`;
`unreachable`, `wait_timeout` without an answer), `message` and `details` (one entry per
invalid field or batch item). Reads and idempotent submissions (batches) are retried on
connection errors and 503 with exponential backoff (`Backoff(retries=4, first=0.5,
cap=8.0)`, a Retry-After honoured); a single screening's POST is retried only when the
connection was never made, since the server cannot recognise a repeat of it.
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
    "Review",
    "Screening",
    "ScreeningListed",
]
