"""Bodies of /v1/reports (built from app.reports.summary values)."""

from __future__ import annotations

from datetime import date, datetime

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


TOKENS_PER_SCREENING = "Mean tokens of each kind per screening (null with no screenings)."


class GroupOut(_FromAttributes):
    role: str
    model: str | None = Field(description="As the provider reported it; null when supplied.")
    prompt_version: str | None
    supplied: bool = Field(
        description="Replies the client supplied (no model, no prompt, no call): a group "
        "of their own, labelled `supplied` in the terminal and HTML reports."
    )
    screenings: int = Field(description="Screenings with a call of this role, model, version.")
    calls: int
    readings: dict[str, int] = Field(
        description="Final readings (a re-scoring's reading where one was applied): ok, "
        "model_unclear (status ok, verdict unclear), "
        "unreadable (missing/invalid/conflicting/bare_cr/ambiguous), truncated, empty, "
        "provider_error, refused."
    )
    format_retry: RateOut = Field(description="Screenings that needed a format retry.")
    retry_recovered: RateOut = Field(description="Of those, the ones whose final reading is ok.")
    truncation: RateOut = Field(description="Calls whose reply was truncated.")
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None] = Field(description=TOKENS_PER_SCREENING)
    timed_calls: int = Field(
        description="Calls that reached a provider, whose latencies the quantiles are of."
    )
    calls_not_sent: int = Field(
        description="Calls that never reached a provider (none configured): stored with no "
        "HTTP status and 0 ms, which is not a latency, so they are not timed."
    )
    latency_p50_ms: float | None = Field(
        description="Nearest-rank median call latency: exact in whole ms below 10 s, "
        "within 0.5% above (a bounded histogram); null without timed calls."
    )
    latency_p95_ms: float | None = Field(description="The 95th percentile, as p50.")
    human: HumanRatesOut


class AgreementOut(_FromAttributes):
    screenings: int = Field(description="Screenings where both final readings are status ok.")
    kappa: float | None = Field(description="Cohen's kappa, translator vs judge verdicts.")


class JudgeOut(_FromAttributes):
    judge: str = Field(description="The judge's name (`judge` for the single judge).")
    models: list[str] = Field(description="The models its calls were answered by.")
    screenings: int = Field(description="Screenings with a call of this judge.")
    calls: int
    readings: dict[str, int] = Field(description="Final readings, as for a group.")
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None] = Field(description=TOKENS_PER_SCREENING)
    timed_calls: int = Field(description="Calls that reached a provider.")
    latency_p50_ms: float | None
    latency_p95_ms: float | None


class PanelAgreementOut(_FromAttributes):
    n: int = Field(description="Panel screenings where the translator and every judge read `ok`.")
    fleiss_kappa: float | None = Field(
        description="Fleiss' kappa of their verdicts, the translator and the judges as raters."
    )
    pairs: dict[str, float | None] = Field(
        description="Cohen's kappa for each pair of judges (`a/b`), over the panel "
        "screenings both read `ok`."
    )


class ResolutionOut(_FromAttributes):
    screenings: int
    faithful: int = Field(description="Decided faithful (their final decision).")
    mismatch: int = Field(description="Decided mismatch.")
    undecided: int = Field(description="Not decided yet, or reopened since.")
    mismatch_share: RateOut = Field(description="Mismatch among the decided ones.")


class ResolutionsOut(_FromAttributes):
    total: ResolutionOut = Field(description="Every needs_review screening.")
    by_reason: dict[str, ResolutionOut] = Field(
        description="Those with each reason (counted as `reasons` is); a screening with "
        "two reasons counts under both."
    )


class WaitingItemOut(_FromAttributes):
    item_id: int
    screening_id: str
    created_at: datetime


class BacklogOut(_FromAttributes):
    open: int = Field(description="Unresolved and unclaimed (a lapsed claim counts as open).")
    claimed: int = Field(description="Held by a reviewer now.")
    waiting: int = Field(description="open + claimed.")
    oldest: WaitingItemOut | None = Field(description="The unresolved item queued first.")
    oldest_age_seconds: float | None = Field(description="How long it has waited, at `as_of`.")
    as_of: datetime | None


class TagCountOut(_FromAttributes):
    tag: str
    screenings: int
    outcomes: dict[str, int]


class TagCountsOut(_FromAttributes):
    shown: list[TagCountOut] = Field(
        description="At most 100 tags, most screenings first (then by name); a screening "
        "giving a tag twice counts once."
    )
    total: int = Field(description="Distinct tags on these screenings.")


class DayCountOut(_FromAttributes):
    day: date = Field(description="A UTC day of creation; days without screenings are left out.")
    screenings: int
    outcomes: dict[str, int]


class ReviewerAgreementOut(_FromAttributes):
    double_reviewed: int = Field(
        description="Double-review items (FAITHSCREEN_REVIEW_DOUBLE_RATE) with two standing "
        "decisions by different people (the first two; withdrawn ones and `unsure` left out)."
    )
    agreed: int = Field(description="Of those, the ones where both decided the same.")
    agreement: float | None = Field(description="agreed/double_reviewed; null below 2 items.")
    kappa: float | None = Field(
        description="Cohen's kappa between the first and second decisions; null below 2 "
        "items, and when both people always gave one and the same decision (0/0)."
    )


class DefectCountsOut(_FromAttributes):
    mismatches: dict[str, int] = Field(
        description="Per outcome, the screenings people finally decided mismatch: for "
        "`passed`, the mismatches the screen let through."
    )
    by_outcome: dict[str, dict[str, int]] = Field(
        description="Per outcome, how many of those had each defect named on the decision "
        "(or adjudication) that decided them, from the fixed vocabulary (dropped_hypothesis, "
        "extra_hypothesis, weakened_conclusion, strengthened_conclusion, wrong_type, "
        "wrong_constant, wrong_quantifier, wrong_answer, vacuous, other); a screening with "
        "two defects counts under both, one decided on a note alone under none."
    )


class LeanSavingOut(_FromAttributes):
    lean_error: int
    lean_unavailable: int
    stopped: int
    llm_calls_saved_at_least: int = Field(
        description="Two per screening Lean stopped (the translator's and one judge's "
        "call): a floor, since panels, confirmations and retries make more."
    )


class SummaryOut(_FromAttributes):
    screenings: int
    outcomes: dict[str, int]
    reasons: dict[str, int] = Field(
        description="Screenings per reason. A bare `evidence_review` / `evidence_flag` is "
        "not counted beside the `evidence_review:<code>` reasons that refine it."
    )
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None] = Field(description=TOKENS_PER_SCREENING)
    groups: list[GroupOut]
    agreement: AgreementOut
    human: HumanRatesOut
    resolutions: ResolutionsOut = Field(
        description="How people decided the needs_review screenings, by reason."
    )
    backlog: BacklogOut = Field(
        description="The review queue's unresolved items among these screenings."
    )
    tags: TagCountsOut = Field(description="Outcomes by tag.")
    days: list[DayCountOut] = Field(description="Screenings per UTC day, by outcome.")
    reviewer_agreement: ReviewerAgreementOut = Field(
        description="How often two people agree on the double-reviewed items among these "
        "screenings' queue items."
    )
    defects: DefectCountsOut = Field(
        description="Which kinds of mismatch people found, by the screening's outcome."
    )
    conflicts: int = Field(
        description="Pairs whose screenings were finally decided both faithful and mismatch "
        "(listed by GET /v1/decisions/conflicts)."
    )
    judges: list[JudgeOut] = Field(
        default_factory=list,
        description="Per judge: parse statuses, tokens and latency of its calls.",
    )
    panel_agreement: PanelAgreementOut | None = Field(
        default=None, description="Agreement within the judge panels (FAITHSCREEN_JUDGES)."
    )
    lean: LeanSavingOut | None = Field(
        default=None,
        description="Screenings a Lean check stopped before any model, and the LLM calls "
        "that saved (docs/lean.md); null when none was stopped.",
    )


class PersonStatsOut(_FromAttributes):
    actor: str = Field(description="The key name that decided.")
    decisions: int = Field(description="Standing decisions (`unsure` among them; not undone).")
    faithful: int
    mismatch: int
    unsure: int
    unsure_rate: float | None = Field(description="unsure/decisions; null without decisions.")
    median_seconds: float | None = Field(
        description="Median seconds per item, from when the person first opened it "
        "(GET /v1/queue/{id} or its page) to their decision; null without a decision made "
        "after an opening."
    )
    withdrawn: int = Field(description="Decisions they took back within the undo window.")
    adjudications: int = Field(description="Disputed double reviews they settled (admins).")
    double_reviewed: int = Field(
        description="Double-reviewed items where they were one of the two people."
    )
    agreed: int = Field(description="Of those, the ones where the other person agreed.")
    agreement: float | None = Field(description="agreed/double_reviewed; null below 2 items.")


class ReviewStatsOut(BaseModel):
    people: list[PersonStatsOut] = Field(description="One row per person, by name.")
