"""Bodies of /v1/reports (built from app.reports.summary values)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _FromAttributes(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class RateOut(_FromAttributes):
    numerator: int
    denominator: int
    value: float | None = Field(description="numerator/denominator; null when it is 0/0.")
    low: float | None = Field(description="The 95% Wilson interval's lower end.")
    high: float | None = Field(description="The 95% Wilson interval's upper end.")
    too_few: bool = Field(description="Fewer than 10 cases: read the counts, not the share.")


class HumanRatesOut(_FromAttributes):
    flagged_precision: RateOut = Field(
        description="Flagged screenings with a final decision that were judged mismatch."
    )
    false_pass: RateOut = Field(
        description="Audited passed screenings with a final decision that were judged mismatch."
    )


class GroupOut(_FromAttributes):
    role: str
    model: str | None
    prompt_version: str | None
    screenings: int = Field(description="Screenings with a call of this role, model, version.")
    calls: int
    readings: dict[str, int] = Field(
        description="Final readings (a re-scoring's reading where one was applied): ok, "
        "model_unclear (status ok, verdict unclear), "
        "unreadable (missing/invalid/conflicting/bare_cr), truncated, empty, "
        "provider_error, refused."
    )
    format_retry: RateOut = Field(description="Screenings that needed a format retry.")
    retry_recovered: RateOut = Field(description="Of those, the ones whose final reading is ok.")
    truncation: RateOut = Field(description="Calls whose reply was truncated.")
    tokens: dict[str, int]
    latency_p50_ms: float | None = Field(
        description="Nearest-rank median call latency: exact in whole ms below 10 s, "
        "within 0.5% above (a bounded histogram); null without timed calls."
    )
    latency_p95_ms: float | None = Field(description="The 95th percentile, as p50.")
    human: HumanRatesOut


class AgreementOut(_FromAttributes):
    screenings: int = Field(description="Screenings where both final readings are status ok.")
    kappa: float | None = Field(description="Cohen's kappa, translator vs judge verdicts.")


class SummaryOut(_FromAttributes):
    screenings: int
    outcomes: dict[str, int]
    reasons: dict[str, int]
    groups: list[GroupOut]
    agreement: AgreementOut
    human: HumanRatesOut
