"""/v1/queue (reviewers work the review queue), /v1/decisions/export (the labelled
dataset) and /v1/decisions/conflicts (pairs decided both ways). The rules live in
app/review_queue/service.py and transitions.py; these handlers translate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import StreamingResponse

from app.api.auth import AdminKeyDep, ReviewerKeyDep, reviewer_access
from app.api.decision_schemas import ConflictPageOut, DecidedOut
from app.api.deps import RuntimeDep, SessionDep
from app.api.queue_schemas import (
    AdjudicationRequest,
    DecisionRequest,
    QueueItemOut,
    QueueItemSummary,
    QueuePageOut,
    ReopenRequest,
    Viewer,
)
from app.api.request_body import JsonBody
from app.api.row_format import LinesFormat, csv_content
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.auth.principal import Principal
from app.csv_rows import CSV_MEDIA_TYPE
from app.intake.requests import StorableText
from app.models.api_key import AccessRole
from app.repositories.keyset import MAX_INTEGER_ID
from app.repositories.queue_search import MAX_TERM_CHARS
from app.review_queue import service
from app.review_queue.export import export_lines
from app.review_queue.service import QueueFilters, ReviewRules
from app.review_queue.visibility import audit_withheld, blind_audit_values
from app.runtime import Runtime
from app.vocabulary import QueueStatus

Handler = TypeVar("Handler", bound=Callable[..., Any])
router = APIRouter(
    tags=["review queue"], dependencies=[reviewer_access], responses=GUARDED_RESPONSES
)
# Bodies are read after the key and role are checked (dependencies listed before them).
DECISION_BODY = JsonBody(DecisionRequest)
ADJUDICATION_BODY = JsonBody(AdjudicationRequest)
REOPEN_BODY = JsonBody(ReopenRequest, optional=True)

# Item ids are 32-bit integers in the database; a larger number can name no item.
ItemId = Annotated[int, Path(ge=1, le=MAX_INTEGER_ID)]
NDJSON_MEDIA_TYPE = "application/x-ndjson"
REASON_DOC = (
    "A reason code (`translator_truncated`), or a kind that matches every reason with "
    "that prefix before a colon (`evidence_review` matches `evidence_review:...`)."
)
SEARCH_DOC = (
    "Free text, case-insensitive, found in the informal or formal statement or an external "
    "id of a screening the item answers for (of a blind item, only its own screening's)."
)
EXPORT_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "content": {
            "application/x-ndjson": {},
            **csv_content("With ?format=csv: the same fields as columns, under a header row."),
        },
        "description": "One JSON object a line per decision (or adjudication) and screening "
        "it applies to: the pair, screening id, outcome, reasons, audit, double_review, "
        "kind, decision, note, defects, blind, reviewer, time, `superseded` (reopened, "
        "adjudicated or withdrawn later) and `withdrawn`. A non-admin's export leaves out "
        "decisions on items still blind to them and on double reviews awaiting their "
        "second decision.",
    }
}


@router.get("/v1/queue", response_model=QueuePageOut, responses=error_responses(422))
async def list_queue(
    session: SessionDep,
    principal: ReviewerKeyDep,
    runtime: RuntimeDep,
    status: QueueStatus | None = None,
    reason: Annotated[StorableText | None, Query(max_length=200, description=REASON_DOC)] = None,
    batch_id: Annotated[StorableText | None, Query(max_length=36)] = None,
    audit: bool | None = None,
    q: Annotated[
        StorableText | None, Query(max_length=MAX_TERM_CHARS, description=SEARCH_DOC)
    ] = None,
    mine: Annotated[bool, Query(description="Only items assigned to the caller.")] = False,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> QueuePageOut:
    """Oldest first; follow `next_cursor` for the next page. A blind item (an audit decided
    without seeing the models) shows `blind: true` and no outcome, reasons or final
    decision until it is resolved, and a `reason` filter never matches it (nor an `audit`
    filter where its audit flag is withheld): admins see everything."""
    viewer = _viewer(principal, runtime)
    audits = blind_audit_values(viewer.mode) if principal.role is not AccessRole.ADMIN else ()
    filters = QueueFilters(
        status=status,
        reason=reason,
        batch_id=batch_id,
        audit=audit,
        blind_audits=audits,
        audit_withheld=audit_withheld(viewer.mode),
        text=q.strip() if q else None,
        assigned_to=principal.name if mine else None,
    )
    page = await service.list_items(session, principal, filters, cursor=cursor, limit=limit)
    return QueuePageOut.of(page, viewer)


@router.get("/v1/queue/{item_id}", response_model=QueueItemOut, responses=error_responses(404))
async def get_queue_item(
    item_id: ItemId, session: SessionDep, principal: ReviewerKeyDep, runtime: RuntimeDep
) -> QueueItemOut:
    """The item with everything a reviewer needs, and its decision trail. On a blind item,
    until it is resolved: the pair (and header) only, `blind: true`, none of the outcome,
    reasons, evidence, reviews, back-translations, rulings or label (the label is never
    shown). While a double review awaits its second decision, nobody but admins sees the
    first. Admins see everything. The first read by each person (in a round: a reopen starts
    a new one) is their opening of the item: their time on it runs from there (GET
    /v1/review/stats, `opened_at` on their decision)."""
    detail = await service.get_item(session, principal, item_id)
    return QueueItemOut.of_detail(detail, _viewer(principal, runtime))


def _viewer(principal: Principal, runtime: Runtime) -> Viewer:
    return Viewer(principal, runtime.settings.review_blind)


@router.post(
    "/v1/queue/{item_id}/claim",
    response_model=QueueItemSummary,
    responses=error_responses(404, 409),
)
async def claim_queue_item(
    item_id: ItemId, session: SessionDep, principal: ReviewerKeyDep, runtime: RuntimeDep
) -> QueueItemSummary:
    """Hold the item for FAITHSCREEN_REVIEW_CLAIM_SECONDS (claiming again extends it);
    409 while another reviewer holds a live claim, or once it is resolved."""
    seconds = runtime.settings.review_claim_seconds
    entry = await service.claim(session, principal, item_id, claim_seconds=seconds)
    return QueueItemSummary.of(entry, _viewer(principal, runtime))


@router.post(
    "/v1/queue/{item_id}/release",
    response_model=QueueItemSummary,
    responses=error_responses(403, 404, 409),
)
async def release_queue_item(
    item_id: ItemId, session: SessionDep, principal: ReviewerKeyDep, runtime: RuntimeDep
) -> QueueItemSummary:
    """Give the claim back: its holder, or an admin (403 for another reviewer)."""
    entry = await service.release(session, principal, item_id)
    return QueueItemSummary.of(entry, _viewer(principal, runtime))


def decision_route(
    action: str, *statuses: int, body: JsonBody[Any] | None = None
) -> Callable[[Handler], Handler]:
    """POST /v1/queue/{item_id}/ACTION: a change to the item's decision trail, answered
    201 with the row it wrote (DecidedOut)."""
    return router.post(
        f"/v1/queue/{{item_id}}/{action}",
        status_code=201,
        response_model=DecidedOut,
        responses=error_responses(*statuses),
        openapi_extra=body.openapi_extra() if body is not None else None,
    )


@decision_route("decision", 400, 404, 409, 413, 422, body=DECISION_BODY)
async def decide_queue_item(
    item_id: ItemId,
    principal: ReviewerKeyDep,
    body: Annotated[DecisionRequest, Depends(DECISION_BODY)],
    session: SessionDep,
    runtime: RuntimeDep,
) -> DecidedOut:
    """The claimant's decision. `faithful` or `mismatch` resolves the item and sets
    `final_decision` on every screening it answers for (outcomes never change); on a
    double review the first awaits a second person's (`awaiting_second`), whose agreement
    resolves it and disagreement makes it `disputed`, for an admin to adjudicate.
    `unsure` records the doubt and gives the item back to the queue. 409 unless the caller
    holds the claim, for a resolved or disputed item, and for a double review's second
    decision by its first person (`needs_another_reviewer`); 422 for an unknown defect
    (`unknown_defect`, listing the `allowed` ones), a mismatch with neither note nor
    defect (`note_or_defects_required`), `unsure` without a note (`note_required`),
    `faithful` with defects (`defects_need_mismatch`)."""
    decided = await service.decide(
        session,
        principal,
        item_id,
        body.decision,
        body.note,
        defects=body.defects,
        rules=ReviewRules.of(runtime.settings),
    )
    return DecidedOut.of_decided(decided)


@decision_route("undo", 404, 409)
async def undo_queue_decision(
    item_id: ItemId, principal: ReviewerKeyDep, session: SessionDep, runtime: RuntimeDep
) -> DecidedOut:
    """Withdraw your decision, the latest row of the item's trail, within
    FAITHSCREEN_REVIEW_UNDO_SECONDS of making it: the trail gains a `withdrawal` row
    (nothing is deleted), a final decision it set is cleared, and the item is yours again,
    claimed, as it was before. 409 `undo_window_passed` later, `nothing_to_undo` when the
    latest row is not your decision, `claimed_by_other` when someone took the item since,
    `pair_has_open_item` when a newer item of the pair waits since, `decision_final` for a
    blind decision that settled its item or a double review's second decision (never
    withdrawn: its author has since seen what it decided)."""
    rules = ReviewRules.of(runtime.settings)
    return DecidedOut.of_decided(await service.undo(session, principal, item_id, rules=rules))


@decision_route("adjudicate", 400, 403, 404, 409, 413, 422, body=ADJUDICATION_BODY)
async def adjudicate_queue_item(
    item_id: ItemId,
    principal: AdminKeyDep,
    body: Annotated[AdjudicationRequest, Depends(ADJUDICATION_BODY)],
    session: SessionDep,
) -> DecidedOut:
    """Admin only, no claim needed: settle a `disputed` double review (409 `not_disputed`
    otherwise, `adjudicator_decided` for an admin who gave one of its decisions). Resolves
    the item and sets every screening's `final_decision`."""
    decided = await service.adjudicate(
        session, principal, item_id, body.decision, body.note, defects=body.defects
    )
    return DecidedOut.of_decided(decided)


@decision_route("reopen", 400, 403, 404, 409, 413, 422, body=REOPEN_BODY)
async def reopen_queue_item(
    item_id: ItemId,
    principal: AdminKeyDep,
    body: Annotated[ReopenRequest | None, Depends(REOPEN_BODY)],
    session: SessionDep,
) -> DecidedOut:
    """Admin only: back to open, `final_decision` cleared on its screenings; the trail
    keeps everything. 409 `pair_has_open_item` while a newer item of the pair waits."""
    note = body.note if body is not None else ""
    return DecidedOut.of_decided(await service.reopen(session, principal, item_id, note))


@router.get(
    "/v1/decisions/conflicts", response_model=ConflictPageOut, responses=error_responses(422)
)
async def decision_conflicts(
    session: SessionDep,
    principal: ReviewerKeyDep,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> ConflictPageOut:
    """Pairs (the same informal, formal and header) whose screenings were given both
    `faithful` and `mismatch` as final decisions, on queue items resolved at different
    times; oldest pair first, follow `next_cursor`."""
    page = await service.conflicts(session, principal, cursor=cursor, limit=limit)
    return ConflictPageOut.of(page)


@router.get("/v1/decisions/export", response_class=StreamingResponse, responses=EXPORT_DOC)
async def export_decisions(
    runtime: RuntimeDep,
    principal: ReviewerKeyDep,
    after: Annotated[
        int, Query(ge=0, le=MAX_INTEGER_ID, description="Only decisions with a higher id.")
    ] = 0,
    row_format: LinesFormat = "jsonl",
) -> StreamingResponse:
    """Every decision as JSONL (or CSV), oldest first, streamed page by page."""
    blind = runtime.settings.review_blind
    as_csv = row_format == "csv"
    lines = export_lines(runtime.sessions, principal, after=after, blind_mode=blind, as_csv=as_csv)
    return StreamingResponse(lines, media_type=CSV_MEDIA_TYPE if as_csv else NDJSON_MEDIA_TYPE)
