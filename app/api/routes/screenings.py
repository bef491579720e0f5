"""/v1/screenings: submit one pair, read one screening, list screenings."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import RuntimeDep, SessionDep
from app.api.schemas import Accepted, ScreeningOut, ScreeningPage, ScreeningSummary
from app.errors import AppError, NotFound
from app.intake import screenings as intake
from app.intake.requests import ScreeningRequest
from app.repositories import screenings
from app.vocabulary import Outcome, ScreeningStatus

router = APIRouter(prefix="/v1/screenings", tags=["screenings"])


@router.post("", status_code=202, response_model=Accepted)
async def submit_screening(
    request: ScreeningRequest, session: SessionDep, runtime: RuntimeDep
) -> Accepted:
    """Queue a pair for screening (or decide it at once when `replies` are supplied)."""
    screening = await intake.submit(session, request, runtime.settings)
    # The session dependency commits, then wakes the worker (it must not look before that).
    session.info["work_queued"] = True
    return Accepted(id=screening.id, status=screening.status)


@router.get("/{screening_id}", response_model=ScreeningOut)
async def get_screening(screening_id: str, session: SessionDep) -> ScreeningOut:
    """The screening with its outcome, reasons, evidence and every review."""
    screening = await screenings.get(session, screening_id)
    if screening is None:
        raise NotFound("screening", screening_id)
    return ScreeningOut.of(screening)


@router.get("", response_model=ScreeningPage)
async def list_screenings(
    session: SessionDep,
    external_id: str | None = None,
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
