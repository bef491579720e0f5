"""Batch response bodies, and the request body's description for the OpenAPI document
(the handler reads the body itself: it may be JSON or JSONL)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.api.lean_schemas import LEAN_STATUS_DOC, LeanStatusShown
from app.api.row_format import csv_content
from app.api.schemas import NextCursor
from app.intake.requests import ScreeningRequest
from app.models.batch import Batch
from app.repositories.batches import MAX_FAILURE_CAUSES, BatchStatus, ItemResult, Progress

STATUS_DOC = "queued: no item has started; running: some have, not all are done; done: all are."


class BatchRequest(BaseModel):
    """The JSON body of POST /v1/batches (documentation; see the handler)."""

    items: list[ScreeningRequest] = Field(
        description="Screening requests, each as the body of POST /v1/screenings."
    )
    name: str | None = Field(default=None, max_length=200)


class BatchAccepted(BaseModel):
    id: str
    name: str | None
    total: int = Field(description="Items in the batch.")
    status: BatchStatus = Field(description=STATUS_DOC)


class BatchSummary(BaseModel):
    id: str
    name: str | None
    total: int
    done: int = Field(description="Items with their outcome.")
    status: BatchStatus = Field(description=STATUS_DOC)
    created_at: datetime

    @classmethod
    def of(cls, batch: Batch, done: int, status: BatchStatus) -> BatchSummary:
        return cls.model_validate(
            {"id": batch.id, "name": batch.name, "total": batch.total}
            | {"done": done, "status": status, "created_at": batch.created_at}
        )


class FailureOut(BaseModel):
    reason: str = Field(
        description="`translator_provider_error`, `judge_provider_error` or `job_failed`."
    )
    error: str = Field(description="What failed, as stored with the review or screening.")
    count: int = Field(description="Done items that ended on this cause.")


class BatchOut(BatchSummary):
    outcomes: dict[str, int] = Field(description="Items per outcome (every outcome listed).")
    parse_statuses: dict[str, dict[str, int]] = Field(
        description="Every stored review of the batch (all attempts, format retries and "
        "confirmations included), counted per role and parse status."
    )
    dead: int = Field(
        description="Items whose job failed too often and was given up (each ends in "
        "needs_review with the reason job_failed)."
    )
    needed_provider: int = Field(
        description="Items that needed a provider call: every item without supplied replies."
    )
    provider_failed: int = Field(
        description="Of those, the done items with a call that failed at the provider "
        "(a provider_error review, of either role). Equal to needed_provider once all are "
        "done: nothing was screened, check the provider settings."
    )
    blind: int = Field(
        default=0,
        description="Items that answer for a blind queue item, when the caller is a reviewer "
        "(a key that may decide queue items, no admin): left out of outcomes, "
        "parse_statuses, dead, provider_failed and failures until the item is resolved "
        "(still counted in done and status). Always 0 for submitter keys and admins.",
    )
    failures: list[FailureOut] = Field(
        description=f"Done items per failure cause, most frequent first (at most "
        f"{MAX_FAILURE_CAUSES}): `<role>_provider_error` with the failed call's error, "
        "`job_failed` with the worker's. An item with both roles failing counts under each."
    )

    @classmethod
    def of_progress(cls, batch: Batch, progress: Progress) -> BatchOut:
        summary = BatchSummary.of(batch, progress.done, progress.status)
        return cls(
            **summary.model_dump(),
            outcomes=progress.outcomes,
            parse_statuses=progress.parse_statuses,
            dead=progress.dead,
            needed_provider=progress.needed_provider,
            provider_failed=progress.provider_failed,
            blind=progress.blind,
            failures=[
                FailureOut.model_validate(f, from_attributes=True) for f in progress.failures
            ],
        )


class BatchPage(BaseModel):
    items: list[BatchSummary]
    next_cursor: NextCursor


class BatchResultLine(BaseModel):
    """One line of GET /v1/batches/{id}/results."""

    index: int = Field(description="The item's position in the submitted batch (0-based).")
    id: str = Field(description="The screening's id.")
    external_id: str | None
    status: str
    outcome: str | None
    reasons: list[str] | None = Field(description="null only on a `blind` line.")
    blind: bool = Field(
        default=False,
        description="The item's pair has a blind queue item and the caller is a reviewer: "
        "its outcome, reasons and lean_status are withheld until the item is resolved.",
    )
    lean_status: LeanStatusShown | None = Field(
        default="not_checked", description=LEAN_STATUS_DOC + " null only on a `blind` line."
    )

    @classmethod
    def of(cls, item: ItemResult, *, blind: bool = False) -> BatchResultLine:
        line = cls.model_validate(item, from_attributes=True)
        # Lean's status would tell a blind reviewer what stopped the pair (lean_error).
        withheld = {"outcome": None, "reasons": None, "blind": True, "lean_status": None}
        return line.model_copy(update=withheld) if blind else line


def _ref(model: str) -> str:
    return f"#/components/schemas/{model}"


def request_body_doc() -> dict[str, Any]:
    """`openapi_extra` for POST /v1/batches. Nested models point at the components that
    POST /v1/screenings registers (a test checks every reference resolves)."""
    schema = BatchRequest.model_json_schema(ref_template=_ref("{model}"))
    schema.pop("$defs", None)
    jsonl = {
        "type": "string",
        "description": "One screening request (a JSON object, as the body of "
        "POST /v1/screenings) per line; blank lines are skipped. Name the batch with ?name=.",
    }
    content = {"application/json": {"schema": schema}, "application/x-ndjson": {"schema": jsonl}}
    return {"requestBody": {"required": True, "content": content}}


def results_doc() -> dict[int | str, dict[str, Any]]:
    line = BatchResultLine.model_json_schema()
    content = {
        "application/x-ndjson": {"schema": line},
        **csv_content("With ?format=csv: the same fields as columns, under a header row."),
    }
    return {
        200: {"description": "One JSON object per line, in submission order.", "content": content}
    }
