"""/v1/review/stats: per person, what their review work looks like (for reviewers and admins;
the /review/stats page renders the same numbers)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.auth import ReviewerKeyDep, reviewer_access
from app.api.deps import SessionDep
from app.api.report_schemas import PersonStatsOut, ReviewStatsOut
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.intake.requests import UtcTime
from app.models.api_key import AccessRole
from app.reports.review_stats import person_stats
from app.repositories import review_measures

router = APIRouter(
    prefix="/v1/review",
    tags=["review queue"],
    dependencies=[reviewer_access],
    responses=GUARDED_RESPONSES,
)


@router.get("/stats", response_model=ReviewStatsOut, responses=error_responses(422))
async def review_stats(
    session: SessionDep,
    principal: ReviewerKeyDep,
    since: Annotated[UtcTime | None, Query(description="Decided at or after (UTC).")] = None,
    until: Annotated[UtcTime | None, Query(description="Decided before (UTC).")] = None,
) -> ReviewStatsOut:
    """Per person: decisions, the median seconds per item (from their first opening of the
    item to the decision), the unsure rate, and agreement with the other person on the
    double-reviewed items they were one of the two on (both decisions inside the time
    range). A withdrawn decision is counted as withdrawn, not as a decision. For anyone
    but an admin, a double review awaiting its second decision counts for nobody until
    both are in: a count must not tell the second person what the first decided."""
    admin = principal.allows(AccessRole.ADMIN)
    facts = await review_measures.facts_between(
        session, since=since, until=until, include_awaiting_second=admin
    )
    people = [PersonStatsOut.model_validate(row) for row in person_stats(facts)]
    return ReviewStatsOut(people=people)
