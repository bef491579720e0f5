"""/v1/screenings: submit one pair, read one screening, list screenings."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import PlainTextResponse
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.auth import SubmitterKeyDep, submitter_access
from app.api.deps import AfterCommitDep, RuntimeDep, SessionDep
from app.api.request_body import JsonBody
from app.api.schemas import (
    GUARDED_RESPONSES,
    Accepted,
    ScreeningOut,
    ScreeningPage,
    ScreeningSummary,
    error_responses,
)
from app.auth.principal import Principal
from app.errors import AppError, NotFound
from app.intake import screenings as intake
from app.intake.idempotency import Keyed
from app.intake.requests import ScreeningRequest, StorableText
from app.models.screening import Screening
from app.repositories import blind_items, rescores, reviews, screenings
from app.review_queue.visibility import screening_blind_audits
from app.runtime import Runtime
from app.vocabulary import Outcome, ScreeningStatus

# Submitters and above: every /v1 endpoint needs a key.
router = APIRouter(
    prefix="/v1/screenings",
    tags=["screenings"],
    dependencies=[submitter_access],
    responses=GUARDED_RESPONSES,
)
# Read after the key is checked (a router dependency), never before.
BODY = JsonBody(ScreeningRequest)


IDEMPOTENCY_DOC = (
    "A repeat with the same key and the same body (byte for byte) within "
    "FAITHSCREEN_SCREENING_IDEMPOTENCY_SECONDS returns the screening stored first, with 200 "
    "instead of 202, and stores nothing; another body: 409 `idempotency_key_reused`. After "
    "the window the key makes a new screening. Keys are scoped per API key: another key's "
    "same Idempotency-Key is another key."
)
SUBMIT_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"model": Accepted, "description": "An Idempotency-Key repeat: the earlier screening."},
    **error_responses(400, 409, 413, 422, 429),
}


@router.post(
    "",
    status_code=202,
    response_model=Accepted,
    responses=SUBMIT_RESPONSES,
    openapi_extra=BODY.openapi_extra(),
    description="Queue a pair for screening (or decide it at once when `replies` are "
    "supplied and no Lean server is set; with FAITHSCREEN_LEAN_SERVER_URL such a pair is "
    "queued for its Lean check first), at priority `interactive` unless "
    "`options.priority` says `batch`. 429 "
    "`key_outstanding_cap` or `key_interactive_cap` (with Retry-After) when the key has "
    "as many screenings outstanding as FAITHSCREEN_KEY_MAX_OUTSTANDING(_INTERACTIVE) allows.",
)
async def submit_screening(
    http_request: Request,
    response: Response,
    request: Annotated[ScreeningRequest, Depends(BODY)],
    session: SessionDep,
    after_commit: AfterCommitDep,
    runtime: RuntimeDep,
    principal: SubmitterKeyDep,
    idempotency_key: Annotated[
        str | None, Header(min_length=1, max_length=255, description=IDEMPOTENCY_DOC)
    ] = None,
) -> Accepted:
    # The body as sent (Starlette keeps what BODY read), so a repeat is matched byte for byte.
    keyed = Keyed.of(idempotency_key, await http_request.body())
    submitted = await intake.submit(
        session, request, runtime.settings, principal=principal, keyed=keyed
    )
    screening = submitted.screening
    if submitted.created:
        after_commit.wake_worker()
    else:
        response.status_code = 200
    return Accepted(id=screening.id, status=screening.status)


BLIND_RULE = (
    "A reviewer-role key (one that may decide queue items, but no admin) reads a screening "
    "whose pair (the same informal, formal and header) has a blind queue item (an audit "
    "decided without seeing the models, FAITHSCREEN_REVIEW_BLIND) as the queue shows it: "
)


@router.get(
    "/{screening_id}",
    response_model=ScreeningOut,
    responses=error_responses(404),
    description="The screening with its outcome, reasons, evidence and every review.\n\n"
    + BLIND_RULE
    + "not at all here (403 `blind_item`) until the item is resolved; read the pair at "
    "GET /v1/queue/{id}. Submitter keys (a pipeline polling its result) and admins always "
    "read it whole.",
)
async def get_screening(
    screening_id: str, session: SessionDep, principal: SubmitterKeyDep, runtime: RuntimeDep
) -> ScreeningOut:
    # No stored id holds a NUL, and PostgreSQL would refuse to even compare with one.
    screening = None if "\x00" in screening_id else await screenings.get(session, screening_id)
    if screening is None:
        raise NotFound("screening", screening_id)
    await _refuse_blind(session, screening_id, principal, runtime)
    rulings, readings = await rescores.history(session, screening_id)
    return ScreeningOut.of(screening, rulings, readings)


RAW_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            "text/plain": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
        }
    },
    **error_responses(404),
}


@router.get(
    "/{screening_id}/reviews/{review_id}/raw",
    response_class=PlainTextResponse,
    responses=RAW_RESPONSES,
    description="One review's reply exactly as stored (`raw_response`), whole: "
    "GET /v1/screenings/{id} shows a long one cut (its review's `cut`). For a review "
    "asked as a tool call (`reply_format` `tool`), whose model wrote the call's arguments "
    "and usually no content, the provider's HTTP body as stored instead, as "
    "`application/json`: its `tool_calls` arguments byte for byte. 404 when the "
    "screening has no such review, or the call returned no reply (it failed: see the "
    "review's `error`).\n\n" + BLIND_RULE + "not at all (403 `blind_item`), as above.",
)
async def get_raw_reply(
    screening_id: str,
    review_id: int,
    session: SessionDep,
    principal: SubmitterKeyDep,
    runtime: RuntimeDep,
) -> Response:
    if "\x00" in screening_id:  # as in get_screening
        raise NotFound("screening", screening_id)
    await _refuse_blind(session, screening_id, principal, runtime)
    reply = await reviews.raw_reply(session, screening_id, review_id)
    if reply is None:
        raise NotFound("reply of review", f"{review_id} of screening {screening_id}")
    # A lone surrogate (a JSON escape a provider sent) has no UTF-8: shown as \udXXX.
    whole = reply.text.encode("utf-8", "backslashreplace")
    if reply.is_body:
        return Response(whole, media_type="application/json")
    return PlainTextResponse(whole)


async def _refuse_blind(
    session: AsyncSession, screening_id: str, principal: Principal, runtime: Runtime
) -> None:
    """403 `blind_item` for a reviewer while the screening's pair has a blind item."""
    audits = screening_blind_audits(principal, runtime.settings.review_blind)
    if await blind_items.blind_among(session, [screening_id], audits):
        raise AppError(
            403,
            "blind_item",
            f"screening {screening_id}'s pair waits on a blind review: its outcome is "
            "withheld from reviewers until the queue item is resolved",
        )


@router.get(
    "",
    response_model=ScreeningPage,
    responses=error_responses(422),
    description="Newest first; follow `next_cursor` for the next page.\n\n"
    + BLIND_RULE
    + "`blind: true`, its outcome, reasons, final decision, label and tags withheld, and "
    "never matched by an `outcome` filter.",
)
async def list_screenings(
    session: SessionDep,
    principal: SubmitterKeyDep,
    runtime: RuntimeDep,
    external_id: StorableText | None = None,
    outcome: Outcome | None = None,
    status: ScreeningStatus | None = None,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> ScreeningPage:
    audits = screening_blind_audits(principal, runtime.settings.review_blind)
    hidden = blind_items.is_blind_screening(audits) if audits else None
    items, next_cursor = await screenings.list_page(
        session,
        external_id=external_id,
        outcome=outcome,
        status=status,
        outcome_hidden=hidden,
        cursor=cursor,
        limit=limit,
    )
    blind = await blind_items.blind_among(session, [s.id for s in items], audits)
    return ScreeningPage(items=[_summary(s, blind) for s in items], next_cursor=next_cursor)


def _summary(screening: Screening, blind: set[str]) -> ScreeningSummary:
    summary = ScreeningSummary.of(screening)
    return summary.withheld() if screening.id in blind else summary
