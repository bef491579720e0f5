"""Calibration: a batch's error rates on its labelled screenings, and two batches compared
on the pairs they share. For reviewers and admins."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.auth import ReviewerKeyDep, reviewer_access
from app.api.calibration_schemas import CalibrationOut, ComparisonOut
from app.api.deps import RuntimeDep, SessionDep
from app.api.row_format import ObjectFormat, csv_content
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.auth.principal import Principal
from app.calibration.rows import CALIBRATION_COLUMNS, calibration_csv
from app.calibration.service import batch_calibration, compare_batches, find_batch
from app.csv_rows import CSV_MEDIA_TYPE
from app.errors import AppError
from app.repositories import blind_items
from app.review_queue.visibility import screening_blind_audits
from app.runtime import Runtime

router = APIRouter(
    prefix="/v1", tags=["calibration"], dependencies=[reviewer_access], responses=GUARDED_RESPONSES
)

# A batch's id or its name (names are up to 200 characters, as POST /v1/batches takes them).
BatchId = Annotated[str, Query(min_length=1, max_length=200)]


CSV_DOC = (
    "With ?format=csv: one row per rate and slice, columns "
    f"{', '.join(CALIBRATION_COLUMNS)}; `slice` is `all`, `tag:<tag>`, `kind:<kind>` or "
    "`judge:<name>`, `measure` the rate's name."
)
CSV_RESPONSE: dict[int | str, dict[str, Any]] = {200: {"content": csv_content(CSV_DOC)}}


@router.get(
    "/batches/{batch_id}/calibration",
    response_model=CalibrationOut,
    responses=CSV_RESPONSE | error_responses(404, 409),
)
async def calibration(
    session: SessionDep,
    batch_id: str,
    principal: ReviewerKeyDep,
    runtime: RuntimeDep,
    row_format: ObjectFormat = "json",
) -> CalibrationOut | Response:
    """The confusion matrix of label × outcome, every error rate with its denominator and
    95% interval, slices by tag and by kind of statement, the configurations seen, cost;
    or with `?format=csv` its rates as rows. 403 `blind_item` for a reviewer-role key (no
    admin) while the pair of a screening of the batch has a blind queue item: labels and
    outcomes would tell it. `batch_id` may be the batch's name: 409 `ambiguous_batch_name`
    when several batches carry it."""
    # Resolved first: the blind check must see the real id, not the name.
    found = await find_batch(session, batch_id)
    await _refuse_blind(session, principal, runtime, [found.id])
    body = CalibrationOut.model_validate(await batch_calibration(session, found.id))
    if row_format == "csv":
        rows = calibration_csv(body.model_dump(mode="json"))
        return Response(rows, media_type=CSV_MEDIA_TYPE)
    return body


@router.get(
    "/calibrations/compare",
    response_model=ComparisonOut,
    responses=error_responses(404, 409, 422),
)
async def compare(
    session: SessionDep, a: BatchId, b: BatchId, principal: ReviewerKeyDep, runtime: RuntimeDep
) -> ComparisonOut:
    """False-pass and false-alarm of batch `a` against batch `b` on the labelled pairs both
    screened, with the pairs each gets wrong alone and the exact McNemar p-value. 403
    `blind_item` for a reviewer-role key (no admin) while the pair of a screening of either
    batch has a blind queue item. `a` and `b` may be names: 409 `ambiguous_batch_name` when
    several batches carry one; 409 `no_common_pairs` when no pair is labelled alike and
    done in both."""
    first, second = await find_batch(session, a), await find_batch(session, b)
    await _refuse_blind(session, principal, runtime, [first.id, second.id])
    return ComparisonOut.model_validate(await compare_batches(session, first.id, second.id))


async def _refuse_blind(
    session: AsyncSession, principal: Principal, runtime: Runtime, batch_ids: list[str]
) -> None:
    audits = screening_blind_audits(principal, runtime.settings.review_blind)
    if await blind_items.batch_has_blind(session, batch_ids, audits):
        raise AppError(
            403,
            "blind_item",
            "a screening of this batch waits on a blind review: its label and outcome are "
            "withheld from reviewers until the queue item is resolved",
        )
