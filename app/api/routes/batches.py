"""/v1/batches: submit many pairs at once, follow a batch, stream its results, list batches."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.api.auth import SubmitterKeyDep, submitter_access
from app.api.batch_schemas import (
    BatchAccepted,
    BatchOut,
    BatchPage,
    BatchResultLine,
    BatchSummary,
    request_body_doc,
    results_doc,
)
from app.api.body_cap import BodyCap, cap_body
from app.api.deps import AfterCommitDep, RuntimeDep, SessionDep
from app.api.row_format import LinesFormat
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.csv_rows import CSV_MEDIA_TYPE, csv_header, csv_row
from app.errors import NotFound
from app.intake import batches as intake
from app.intake.batches import BatchBody
from app.intake.requests import StorableText
from app.json_lines import json_line_of
from app.models.batch import Batch
from app.repositories import batches, blind_items
from app.review_queue.visibility import screening_blind_audits

# Submitters and above: every /v1 endpoint needs a key.
router = APIRouter(
    prefix="/v1/batches",
    tags=["batches"],
    dependencies=[submitter_access],
    responses=GUARDED_RESPONSES,
)

# Results are read and sent this many items at a time.
RESULTS_PAGE = 500
IDEMPOTENCY_DOC = (
    "A repeat with the same key and the same body (byte for byte) returns the batch "
    "stored first, with 200 instead of 202, and stores nothing; another body: 409. Keys "
    "are scoped per API key: another key's same Idempotency-Key is another key."
)
ERROR_DESCRIPTIONS = {
    400: "Malformed JSON, or JSON nested deeper than 64 levels.",
    403: "An item asks for priority `interactive` and the key is not an admin's "
    "(`priority_not_allowed`).",
    409: "The Idempotency-Key was used with another body.",
    413: "More items than FAITHSCREEN_MAX_BATCH_ITEMS, or a body larger than "
    "FAITHSCREEN_MAX_BATCH_BYTES.",
    415: "Neither application/json nor application/x-ndjson.",
    422: "Invalid items, listed by index (`details`); nothing was stored.",
    429: "The key would have more screenings queued or running than "
    "FAITHSCREEN_KEY_MAX_OUTSTANDING allows (`key_outstanding_cap`, with Retry-After); "
    "nothing was stored.",
}
SUBMIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": BatchAccepted, "description": "An Idempotency-Key repeat: the earlier batch."},
    **{
        status: entry | {"description": ERROR_DESCRIPTIONS[int(status)]}
        for status, entry in error_responses(*ERROR_DESCRIPTIONS).items()
    },
}


@router.post(
    "",
    status_code=202,
    response_model=BatchAccepted,
    responses=SUBMIT_RESPONSES,
    openapi_extra=request_body_doc(),
)
async def submit_batch(
    request: Request,
    response: Response,
    session: SessionDep,
    after_commit: AfterCommitDep,
    runtime: RuntimeDep,
    principal: SubmitterKeyDep,
    name: Annotated[StorableText | None, Query(max_length=200)] = None,
    idempotency_key: Annotated[
        str | None, Header(min_length=1, max_length=255, description=IDEMPOTENCY_DOC)
    ] = None,
) -> BatchAccepted:
    """Queue every item of the batch (items with `replies` are decided at once, or, with a
    Lean server set, queued for their Lean check first), all or nothing: every item is
    checked before any is stored."""
    # A refused batch raises: the session dependency rolls back, so it leaves no row behind.
    data = await _read_body(request, runtime.settings.max_batch_bytes)
    body = BatchBody.of(data, request.headers.get("content-type"))
    accepted = await intake.submit_batch(
        session,
        body,
        runtime.settings,
        principal=principal,
        name=name,
        idempotency_key=idempotency_key,
    )
    if accepted.queued > 0:
        after_commit.wake_worker()
    if not accepted.created:
        response.status_code = 200
    batch = accepted.batch
    counts = await batches.status_counts(session, [batch.id])
    status = batches.batch_status(batch.total, counts[batch.id])
    return BatchAccepted(id=batch.id, name=batch.name, total=batch.total, status=status)


async def _read_body(request: Request, limit: int) -> bytearray:
    """The body in our own buffer (not Starlette's cached copy, so intake can release it
    once parsed); refused (413) as soon as it is known to pass `limit` bytes."""
    cap_body(request, _batch_cap(limit))
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
    return data


def _batch_cap(limit: int) -> BodyCap:
    return BodyCap(
        limit,
        f"a batch body holds at most {limit} bytes (FAITHSCREEN_MAX_BATCH_BYTES): "
        "split it into several batches",
    )


@router.get("/{batch_id}", response_model=BatchOut, responses=error_responses(404))
async def get_batch(
    batch_id: str, session: SessionDep, principal: SubmitterKeyDep, runtime: RuntimeDep
) -> BatchOut:
    """Progress, counted from the items: done, outcomes, parse statuses, dead jobs. For a
    reviewer-role key (no admin), the items that answer for a blind queue item are counted
    as `blind` and left out of the rest until the item is resolved."""
    batch = await _existing(session, batch_id)
    audits = screening_blind_audits(principal, runtime.settings.review_blind)
    hidden = blind_items.is_blind_screening(audits) if audits else None
    return BatchOut.of_progress(batch, await batches.progress(session, batch, hidden=hidden))


@router.get(
    "/{batch_id}/results",
    response_class=StreamingResponse,
    responses=results_doc() | error_responses(404),
)
async def batch_results(
    batch_id: str,
    runtime: RuntimeDep,
    principal: SubmitterKeyDep,
    row_format: LinesFormat = "jsonl",
) -> StreamingResponse:
    """Every item, one JSON line each (or one CSV row each, under a header), in submission
    order, read from the database page by page as the response is sent. For a
    reviewer-role key (no admin), an item whose pair has a blind queue item is
    `blind: true`, its outcome and reasons withheld until the item is resolved; submitter
    keys and admins read every line whole."""
    # Its own short sessions: a request session would stay open for the whole stream.
    async with runtime.sessions() as session:
        await _existing(session, batch_id)
    audits = screening_blind_audits(principal, runtime.settings.review_blind)
    return results_stream(runtime.sessions, batch_id, audits, row_format)


def results_stream(
    sessions: async_sessionmaker[AsyncSession],
    batch_id: str,
    blind_audits: tuple[bool, ...],
    row_format: str,
) -> StreamingResponse:
    """A batch's results as JSON lines, or CSV rows under a header (`row_format` "csv"),
    streamed page by page: what GET /v1/batches/{id}/results and the admin's batch page
    (app/web/batch_pages.py) both send."""
    if row_format == "csv":
        rows = _result_lines(sessions, batch_id, blind_audits, _csv_line)
        return StreamingResponse(_after_header(rows), media_type=CSV_MEDIA_TYPE)
    lines = _result_lines(sessions, batch_id, blind_audits, _json_line)
    return StreamingResponse(lines, media_type="application/x-ndjson")


# The CSV's columns: the fields of a JSON line, in the same order.
RESULT_COLUMNS = tuple(BatchResultLine.model_fields)


def _json_line(line: BatchResultLine) -> bytes:
    return json_line_of(line.model_dump_json().encode())


def _csv_line(line: BatchResultLine) -> bytes:
    return csv_row(RESULT_COLUMNS, line.model_dump(mode="json"))


async def _after_header(rows: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield csv_header(RESULT_COLUMNS)
    async for row in rows:
        yield row


async def _result_lines(
    sessions: async_sessionmaker[AsyncSession],
    batch_id: str,
    blind_audits: tuple[bool, ...],
    line_of: Callable[[BatchResultLine], bytes],
) -> AsyncIterator[bytes]:
    after = -1
    while True:
        async with sessions() as session:
            page = await batches.results_page(session, batch_id, after=after, limit=RESULTS_PAGE)
            blind = await blind_items.blind_among(session, [i.id for i in page], blind_audits)
        if page:
            yield b"".join(
                line_of(BatchResultLine.of(item, blind=item.id in blind)) for item in page
            )
        if len(page) < RESULTS_PAGE:
            return
        after = page[-1].index


@router.get("", response_model=BatchPage, responses=error_responses(422))
async def list_batches(
    session: SessionDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> BatchPage:
    """Newest first; follow `next_cursor` for the next page."""
    page, next_cursor = await batches.list_page(session, cursor=cursor, limit=limit)
    counts = await batches.status_counts(session, [batch.id for batch in page])
    items = [
        BatchSummary.of(
            batch,
            counts[batch.id].get("done", 0),
            batches.batch_status(batch.total, counts[batch.id]),
        )
        for batch in page
    ]
    return BatchPage(items=items, next_cursor=next_cursor)


async def _existing(session: AsyncSession, batch_id: str) -> Batch:
    batch = await batches.get(session, batch_id)
    if batch is None:
        raise NotFound("batch", batch_id)
    return batch
