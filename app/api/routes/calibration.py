"""Calibration: a batch's error rates on its labelled screenings, and two batches compared
on the pairs they share. For reviewers and admins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.calibration_schemas import CalibrationOut, ComparisonOut
from app.api.deps import SessionDep
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.auth.dependencies import reviewer_access
from app.calibration.service import batch_calibration, compare_batches

router = APIRouter(
    prefix="/v1", tags=["calibration"], dependencies=[reviewer_access], responses=GUARDED_RESPONSES
)

BatchId = Annotated[str, Query(min_length=1, max_length=36)]


@router.get(
    "/batches/{batch_id}/calibration",
    response_model=CalibrationOut,
    responses=error_responses(404),
)
async def calibration(session: SessionDep, batch_id: str) -> CalibrationOut:
    """The confusion matrix of label × outcome, every error rate with its denominator and
    95% interval, slices by tag and by kind of statement, the configurations seen, cost."""
    return CalibrationOut.model_validate(await batch_calibration(session, batch_id))


@router.get(
    "/calibrations/compare",
    response_model=ComparisonOut,
    responses=error_responses(404, 409, 422),
)
async def compare(session: SessionDep, a: BatchId, b: BatchId) -> ComparisonOut:
    """False-pass and false-alarm of batch `a` against batch `b` on the labelled pairs both
    screened, with the pairs each gets wrong alone and the exact McNemar p-value."""
    return ComparisonOut.model_validate(await compare_batches(session, a, b))
