"""/v1/screenings: submit one pair, read one screening, list screenings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from app.api.deps import RuntimeDep, SessionDep
from app.api.request_body import JsonBody
from app.api.schemas import (
    GUARDED_RESPONSES,
    Accepted,
    ScreeningOut,
    ScreeningPage,
    ScreeningSummary,
    error_responses,
)
from app.auth.dependencies import submitter_access
from app.errors import AppError, NotFound
from app.intake import screenings as intake
from app.intake.requests import ScreeningRequest, StorableText
from app.repositories import rescores, screenings
from app.vocabulary import Outcome, ScreeningStatus

# Submitters and above (issue 5: every /v1 endpoint needs a key).
router = APIRouter(
    prefix="/v1/screenings",
    tags=["screenings"],
    dependencies=[submitter_access],
    responses=GUARDED_RESPONSES,
)
# Read after the key is checked (a router dependency), never before.
BODY = JsonBody(ScreeningRequest)


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    responses=error_responses(400, 409, 413, 422),
    openapi_extra=BODY.openapi_extra(),
)
async def submit_screening(
    request: Annotated[ScreeningRequest, Depends(BODY)], session: SessionDep, runtime: RuntimeDep
) -> Accepted:
    """Queue a pair for screening (or decide it at once when `replies` are supplied)."""
    screening = await intake.submit(session, request, runtime.settings)
    # The session dependency commits, then wakes the worker (it must not look before that).
    session.info["work_queued"] = True
    return Accepted(id=screening.id, status=screening.status)


@router.get("/{screening_id}", response_model=ScreeningOut, responses=error_responses(404))
async def get_screening(screening_id: str, session: SessionDep) -> ScreeningOut:
    """The screening with its outcome, reasons, evidence and every review."""
    # No stored id holds a NUL, and PostgreSQL would refuse to even compare with one.
    screening = None if "\x00" in screening_id else await screenings.get(session, screening_id)
    if screening is None:
        raise NotFound("screening", screening_id)
    rulings, readings = await rescores.history(session, screening_id)
    return ScreeningOut.of(screening, rulings, readings)


@router.get("", response_model=ScreeningPage, responses=error_responses(422))
async def list_screenings(
    session: SessionDep,
    external_id: StorableText | None = None,
    outcome: Outcome | None = None,
    status: ScreeningStatus | None = None,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> ScreeningPage:
    """Newest first; follow `next_cursor` for the next page."""
    try:
        items, next_cursor = await screenings.list_page(
            session,
            external_id=external_id,
            outcome=outcome.value if outcome else None,
            status=status.value if status else None,
            cursor=cursor,
            limit=limit,
        )
    except ValueError as error:
        raise AppError(422, "invalid_cursor", f"cursor: {error}") from error
    return ScreeningPage(items=[ScreeningSummary.of(s) for s in items], next_cursor=next_cursor)
