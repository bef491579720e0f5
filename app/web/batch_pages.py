"""/review/batches: an admin's view of the batches, what GET /v1/batches and
/v1/batches/{id} serve, as pages: each batch's progress and outcomes, newest first, a page
of each batch, and its results to download (the API's own stream, JSON lines or CSV).

Admins only (PageAdminDep), as the keys page: an admin sees every item, so nothing here is
withheld for a blind review. Paged by the house's keyset cursor (app/repositories/keyset.py),
refused as a page when it is not one of ours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from fastapi import APIRouter
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import Response

from app.api.deps import RuntimeDep, SessionDep
from app.api.routes.batches import results_stream
from app.errors import AppError, NotFound
from app.models.batch import Batch
from app.repositories import batches
from app.repositories.batches import BatchStatus
from app.review_queue.visibility import screening_blind_audits
from app.vocabulary import Outcome
from app.web.access import BrowserDep, PageAdminDep
from app.web.pages import SECURITY_HEADERS, PageProblem, context_for, render

router = APIRouter(prefix="/review", include_in_schema=False)
PAGE_SIZE = 25
MAX_CURSOR = 200  # as the queue page's
RESULT_FORMATS = {"jsonl": "jsonl", "csv": "csv"}
_FILE_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True, slots=True)
class BatchRow:
    """One batch as the list shows it."""

    id: str
    name: str | None
    created_at: datetime
    total: int
    done: int
    status: BatchStatus
    outcomes: dict[str, int]

    @property
    def percent(self) -> int:
        return percent_done(self.done, self.total)


def percent_done(done: int, total: int) -> int:
    """How much of a batch is done, in whole percent (an empty batch is done)."""
    return 100 if total == 0 else done * 100 // total


def _problem(error: AppError, back: str = "/review/batches") -> PageProblem:
    return PageProblem(error, back_url=back, back_label="Back to the batches")


def _cursor(request: Request) -> str | None:
    cursor = request.query_params.get("cursor", "").strip()
    if len(cursor) > MAX_CURSOR:
        raise _problem(AppError(422, "invalid_cursor", "cursor: not a cursor from this listing"))
    return cursor or None


def _address(cursor: str | None) -> str:
    return "/review/batches" + (f"?{urlencode({'cursor': cursor})}" if cursor else "")


async def _rows(session: AsyncSession, page: list[Batch]) -> list[BatchRow]:
    ids = [batch.id for batch in page]
    statuses = await batches.status_counts(session, ids)
    outcomes = await batches.outcome_counts(session, ids)
    return [
        BatchRow(
            id=batch.id,
            name=batch.name,
            created_at=batch.created_at,
            total=batch.total,
            done=statuses[batch.id].get("done", 0),
            status=batches.batch_status(batch.total, statuses[batch.id]),
            outcomes=outcomes[batch.id],
        )
        for batch in page
    ]


@router.get("/batches")
async def batches_page(
    request: Request, session: SessionDep, admin: PageAdminDep, browser: BrowserDep
) -> Response:
    cursor = _cursor(request)
    try:
        page, next_cursor = await batches.list_page(session, cursor=cursor, limit=PAGE_SIZE)
    except AppError as error:
        raise _problem(error) from error
    context = context_for(
        admin.principal,
        admin.signed_in,
        rows=await _rows(session, page),
        outcomes=[outcome.value for outcome in Outcome],
        first_page_url=_address(None) if cursor else None,
        next_page_url=_address(next_cursor) if next_cursor else None,
    )
    return render(request, browser, "batches.html", context)


async def _existing(session: AsyncSession, batch_id: str) -> Batch:
    batch = await batches.get(session, batch_id[:100])
    if batch is None:
        raise _problem(NotFound("batch", batch_id[:40]))
    return batch


@router.get("/batches/{batch_id}")
async def batch_page(
    batch_id: str, request: Request, session: SessionDep, admin: PageAdminDep, browser: BrowserDep
) -> Response:
    batch = await _existing(session, batch_id)
    progress = await batches.progress(session, batch)
    context = context_for(
        admin.principal,
        admin.signed_in,
        batch=batch,
        progress=progress,
        percent=percent_done(progress.done, batch.total),
        results_url=f"/review/batches/{batch.id}/results",
        queue_url="/review?" + urlencode({"batch_id": batch.id}),
    )
    return render(request, browser, "batch.html", context)


@router.get("/batches/{batch_id}/results")
async def batch_results(
    batch_id: str, request: Request, runtime: RuntimeDep, admin: PageAdminDep
) -> Response:
    """The batch's results as a file to save, read by the API's own stream."""
    row_format = RESULT_FORMATS.get(request.query_params.get("format", "jsonl"))
    if row_format is None:
        raise _problem(AppError(422, "validation_error", "format: jsonl or csv"))
    async with runtime.sessions() as session:  # the stream reads in short sessions of its own
        batch = await _existing(session, batch_id)
    audits = screening_blind_audits(admin.principal, runtime.settings.review_blind)
    response = results_stream(runtime.sessions, batch.id, audits, row_format)
    name = _FILE_NAME_UNSAFE.sub("_", f"batch-{batch.id}-results.{row_format}")
    response.headers.update(SECURITY_HEADERS)
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
