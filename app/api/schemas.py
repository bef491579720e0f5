"""Response bodies. Request bodies live with intake (app/intake/requests.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.models.review import Review
from app.models.screening import Screening


class Accepted(BaseModel):
    id: str
    status: str


class EvidenceOut(BaseModel):
    code: str
    message: str
    severity: str


class ReviewOut(BaseModel):
    role: str
    attempt: int
    purpose: str
    raw_response: str | None = Field(
        description="Byte-for-byte what the provider returned as content."
    )
    verdict: str
    parse_status: str
    back_translation: str | None
    issues: str | None
    finish_reason: str | None
    refusal: str | None
    model: str | None
    usage: dict[str, int]
    latency_ms: int | None
    http_status: int | None
    error: str | None
    max_tokens: int | None
    supplied: bool
    parser_version: str
    prompt_version: str | None
    created_at: datetime

    @classmethod
    def of(cls, review: Review) -> ReviewOut:
        return cls.model_validate(review, from_attributes=True)


class ScreeningSummary(BaseModel):
    id: str
    status: str
    outcome: str | None
    reasons: list[str]
    external_id: str | None
    batch_id: str | None
    policy_version: str | None
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, screening: Screening) -> ScreeningSummary:
        return cls.model_validate(screening, from_attributes=True)


class ScreeningOut(ScreeningSummary):
    informal: str
    formal: str
    header: str
    confirmations: int
    evidence: list[EvidenceOut]
    evidence_version: str | None
    error: str | None
    reviews: list[ReviewOut]

    @classmethod
    def of(cls, screening: Screening) -> ScreeningOut:
        data: dict[str, Any] = ScreeningSummary.of(screening).model_dump()
        pair = screening.pair
        return cls(
            **data,
            informal=pair.informal,
            formal=pair.formal,
            header=pair.header,
            confirmations=screening.confirmations,
            evidence=[EvidenceOut(**e) for e in screening.evidence],
            evidence_version=screening.evidence_version,
            error=screening.error,
            reviews=[ReviewOut.of(r) for r in screening.reviews],
        )


class ScreeningPage(BaseModel):
    items: list[ScreeningSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end."
    )
