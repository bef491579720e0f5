"""/v1/rescore: replay stored replies with the current parser and policy (admins only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.api.auth import AdminKeyDep
from app.api.deps import RuntimeDep
from app.api.request_body import JsonBody
from app.api.rescore_schemas import RescoreOut, RescoreRequest
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.rescore.diff import MAX_LISTED_IDS
from app.rescore.service import rescore

router = APIRouter(prefix="/v1/rescore", tags=["rescore"], responses=GUARDED_RESPONSES)
BODY = JsonBody(RescoreRequest)


@router.post(
    "",
    response_model=RescoreOut,
    responses=error_responses(400, 404, 413, 422),
    openapi_extra=BODY.openapi_extra(),
)
async def rescore_screenings(
    # The key first: dependencies are solved in this order, and the body is read last.
    principal: AdminKeyDep,
    body: Annotated[RescoreRequest, Depends(BODY)],
    runtime: RuntimeDep,
) -> RescoreOut:
    """Re-read every stored raw reply in scope with the current parser and re-decide with
    the current policy and evidence checks; no model is called. Without `apply` nothing is
    written: the answer is the diff (how many outcomes would change, from -> to, reasons
    added and removed, readings that moved) and the changed screening ids (at most 10,000;
    `changed_ids_truncated` says when there were more). With `apply` the changes are
    recorded as new rows under the new versions (`rescore_id` names the run); nothing
    stored is overwritten. Runs to the end before answering."""
    settings = runtime.settings
    run = await rescore(
        runtime.sessions,
        body.scope(),
        apply=body.apply,
        actor=principal.name,
        format_retries=settings.format_retries,
        audit_rate=settings.audit_rate,
        double_rate=settings.review_double_rate,
    )
    return RescoreOut(rescore_id=run.rescore_id, **run.diff.as_json(max_ids=MAX_LISTED_IDS))
