"""/v1/queue/{id}/comments and /v1/queue/{id}/assign(ments): a queue item's comment thread
and assignment, by the rules of app/review_queue/threads.py (who may assign whom, which
comments a blind item or a double review awaiting its second decision shows)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.api.auth import ReviewerKeyDep, reviewer_access
from app.api.deps import RuntimeDep, SessionDep
from app.api.request_body import JsonBody
from app.api.routes.queue import ItemId
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.api.thread_schemas import (
    AssignedOut,
    AssignmentOut,
    AssignRequest,
    CommentOut,
    CommentRequest,
)
from app.review_queue import threads

router = APIRouter(
    tags=["review queue"], dependencies=[reviewer_access], responses=GUARDED_RESPONSES
)
COMMENT_BODY = JsonBody(CommentRequest)
ASSIGN_BODY = JsonBody(AssignRequest)


@router.get(
    "/v1/queue/{item_id}/comments",
    response_model=list[CommentOut],
    responses=error_responses(404),
)
async def list_comments(
    item_id: ItemId, session: SessionDep, principal: ReviewerKeyDep, runtime: RuntimeDep
) -> list[CommentOut]:
    """The item's comments, oldest first. On an item blind to the caller, only their own;
    while a double review awaits its second decision, a non-admin sees no comment another
    person made since the last reopen. Admins see all."""
    mode = runtime.settings.review_blind
    found = await threads.comments_for(session, principal, item_id, mode=mode)
    return [CommentOut.of(row) for row in found]


@router.post(
    "/v1/queue/{item_id}/comments",
    status_code=201,
    response_model=CommentOut,
    responses=error_responses(400, 404, 413, 422),
    openapi_extra=COMMENT_BODY.openapi_extra(),
)
async def add_comment(
    item_id: ItemId,
    principal: ReviewerKeyDep,
    body: Annotated[CommentRequest, Depends(COMMENT_BODY)],
    session: SessionDep,
) -> CommentOut:
    """Add a comment (append-only: never changed or deleted). Any reviewer, any item."""
    return CommentOut.of(await threads.comment(session, principal, item_id, body.body))


@router.post(
    "/v1/queue/{item_id}/assign",
    response_model=AssignedOut,
    responses=error_responses(400, 403, 404, 409, 413, 422),
    openapi_extra=ASSIGN_BODY.openapi_extra(),
)
async def assign_item(
    item_id: ItemId,
    principal: ReviewerKeyDep,
    body: Annotated[AssignRequest, Depends(ASSIGN_BODY)],
    session: SessionDep,
) -> AssignedOut:
    """Assign the item (`GET /v1/queue?mine=true` lists yours). An admin assigns anyone;
    a reviewer takes an item for themselves (403 `assign_self_only` otherwise) and gives
    back their own (403 `not_assignee`). 409 `already_resolved`, and
    `needs_another_reviewer` for a double review's first person while it awaits its
    second. Every change is a row of GET /v1/queue/{id}/assignments."""
    assigned = await threads.assign(session, principal, item_id, body.assignee)
    row = AssignmentOut.of(assigned.row) if assigned.row is not None else None
    return AssignedOut(queue_item_id=item_id, assigned_to=assigned.assignee, row=row)


@router.get(
    "/v1/queue/{item_id}/assignments",
    response_model=list[AssignmentOut],
    responses=error_responses(404),
)
async def list_assignments(
    item_id: ItemId, session: SessionDep, principal: ReviewerKeyDep
) -> list[AssignmentOut]:
    """Who assigned the item to whom, when, oldest first (the audit of assignments)."""
    return [AssignmentOut.of(row) for row in await threads.assignments(session, principal, item_id)]
