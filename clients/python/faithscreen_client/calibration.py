"""GET /v1/batches/{id}/calibration: a batch's error rates on its labelled pairs, as the
client returns them (`Calibration`). Field for field the server's document, as in
`faithscreen_client.models`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Rate(BaseModel):
    """k of n, with the share and its 95% Wilson interval (all three null when n = 0)."""

    k: int
    n: int
    rate: float | None
    low: float | None
    high: float | None


class OutcomeCounts(BaseModel):
    passed: int
    flagged: int
    needs_review: int


class Matrix(BaseModel):
    """Labelled screenings by label, then by outcome."""

    faithful: OutcomeCounts
    mismatch: OutcomeCounts


class Rates(BaseModel):
    false_pass: Rate
    false_alarm: Rate
    false_flag: Rate
    flag_precision: Rate
    pass_precision: Rate
    automation: Rate


class Slice(BaseModel):
    labelled: int
    matrix: Matrix
    rates: Rates


class Config(BaseModel):
    """One configuration the labelled screenings were decided under, and how many."""

    translator_model: str | None
    judge_model: str | None
    prompt_version: str | None
    parser_version: str | None
    policy_version: str | None
    evidence_version: str | None
    confirmations: int
    count: int


class Cost(BaseModel):
    screenings: int
    calls_per_screening: float | None
    prompt_tokens_per_screening: float | None
    completion_tokens_per_screening: float | None
    latency_p50_ms: float | None
    latency_p95_ms: float | None


class Judge(BaseModel):
    """One judge's own verdicts over the labelled pairs it judged."""

    models: list[str]
    pairs: int
    catches: Rate
    faithful: Rate
    unreadable: Rate
    calls_per_pair: float | None
    tokens_per_pair: float | None
    prompt_tokens_per_pair: float | None
    completion_tokens_per_pair: float | None


class Calibration(Slice):
    """Over the batch's labelled, done screenings by their current outcome; sliced by tag,
    by kind of declaration and by judge."""

    batch_id: str
    unlabelled: int
    pending: int
    partial: bool
    by_tag: dict[str, Slice]
    by_kind: dict[str, Slice]
    needs_review_reasons: dict[str, int]
    configs: list[Config]
    cost: Cost
    by_judge: dict[str, Judge] = Field(default_factory=dict)
    # By the screenings' lean_status (ok, error, timeout, unavailable, not_checked).
    by_lean_status: dict[str, Slice] = Field(default_factory=dict)
    # Seat (`translator`, `judge`, `judge:<name>`) -> screenings whose model was marked not
    # evidential: its FAITHFUL never passes a pair.
    non_evidential: dict[str, int] = Field(default_factory=dict)
