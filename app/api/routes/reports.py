"""/v1/reports: the summary of what was screened, for reviewers and admins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.auth import ReviewerKeyDep, reviewer_access
from app.api.deps import RuntimeDep, SessionDep
from app.api.report_schemas import SummaryOut
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.intake.requests import StorableText, UtcTime
from app.reports.service import summary_report
from app.repositories.reports import ReportFilters
from app.review_queue.visibility import screening_blind_audits
from app.vocabulary import Role

router = APIRouter(
    prefix="/v1/reports",
    tags=["reports"],
    dependencies=[reviewer_access],
    responses=GUARDED_RESPONSES,
)

Text = Annotated[StorableText | None, Query(max_length=200)]


@router.get("/summary", response_model=SummaryOut, responses=error_responses(422))
async def summary(
    session: SessionDep,
    principal: ReviewerKeyDep,
    runtime: RuntimeDep,
    batch_id: Annotated[StorableText | None, Query(max_length=36)] = None,
    since: Annotated[UtcTime | None, Query(description="Created at or after (UTC).")] = None,
    until: Annotated[UtcTime | None, Query(description="Created before (UTC).")] = None,
    role: Role | None = None,
    model: Text = None,
    prompt_version: Text = None,
) -> SummaryOut:
    """Outcomes, reasons, per role x model x prompt version call statistics, translator and
    judge agreement, and rates against people's decisions, each with its 95% interval; how
    needs_review screenings were decided by reason, the review queue backlog, outcomes by
    tag and screenings per day; agreement between people on double reviews, the defects
    named on mismatches by outcome, and pairs decided both ways. A reviewer's report (no
    admin) leaves out the screenings of queue items still blind to them, so that a report
    narrowed to one cannot tell its outcome."""
    filters = ReportFilters(
        blind_audits=screening_blind_audits(principal, runtime.settings.review_blind),
        batch_id=batch_id,
        since=since,
        until=until,
        role=role,
        model=model,
        prompt_version=prompt_version,
    )
    return SummaryOut.model_validate(await summary_report(session, filters))
