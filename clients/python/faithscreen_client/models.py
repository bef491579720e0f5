"""The values the client returns: the API's screening and batch response bodies, under the
names a caller thinks in. They mirror the server's OpenAPI document field for field (a test
in the FaithScreen repository, tests/integration/test_client_models.py, fails when either
side renames, drops or retypes a field); a field a newer server adds is ignored."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

ScreeningStatus = Literal["queued", "running", "done"]
BatchStatus = Literal["queued", "running", "done"]
# Passing is evidence, never certification.
Outcome = Literal["passed", "flagged", "needs_review"]
Decision = Literal["faithful", "mismatch"]
# Which work the server claims first: every due interactive screening before any batch one.
Priority = Literal["interactive", "batch"]


class Accepted(BaseModel):
    """POST /v1/screenings: the screening as stored at once."""

    id: str
    status: ScreeningStatus


class Evidence(BaseModel):
    """A deterministic finding about the pair; `field`, `line`, `column`, `end_column`
    locate it (null without a location)."""

    code: str
    message: str
    severity: str
    field: Literal["formal", "informal", "header"] | None = None
    line: int | None = None
    column: int | None = None
    end_column: int | None = None


class Review(BaseModel):
    """One LLM call's record: the raw reply, what was parsed from it, the call's metadata.
    `judge_name`: a panel judge's name, `judge` for the single judge, null for the
    translator; `supplied`: the client gave the reply. `cut`: the texts the server showed
    cut (longer than it shows), each with its whole length in characters; the whole reply
    is at GET /v1/screenings/{screening_id}/reviews/{id}/raw."""

    id: int
    role: str
    judge_name: str | None = None
    attempt: int
    purpose: str
    raw_response: str | None
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
    # False: the model was marked not evidential; its FAITHFUL never counts towards passed.
    evidential: bool = True
    parser_version: str
    # The reply format asked for (text, grammar, tool, json) and, for grammar, its version.
    reply_format: str = "text"
    grammar_version: str | None = None
    prompt_version: str | None
    created_at: datetime
    cut: dict[str, int] = Field(default_factory=dict)


class Ruling(BaseModel):
    """An outcome the screening has had, under the versions that decided it; `rescore_id`
    null for the pipeline's own."""

    outcome: Outcome
    reasons: list[str]
    parser_version: str
    policy_version: str
    evidence_version: str
    rescore_id: str | None
    created_at: datetime


class Reading(BaseModel):
    """A stored reply read again by a re-scoring run (the review is never changed)."""

    role: str
    judge_name: str | None = None
    attempt: int
    verdict: str
    parse_status: str
    back_translation: str | None
    issues: str | None
    parser_version: str
    rescore_id: str
    created_at: datetime
    cut: dict[str, int] = Field(default_factory=dict)


class ScreeningListed(BaseModel):
    """A screening as listings show it. `blind`: it answers for a blind queue item and the
    caller is a reviewer, so outcome, reasons, final decision, label and tags are withheld."""

    id: str
    status: ScreeningStatus
    outcome: Outcome | None
    reasons: list[str] | None
    external_id: str | None
    batch_id: str | None
    priority: Priority
    policy_version: str | None
    created_at: datetime
    finished_at: datetime | None
    final_decision: Decision | None = None
    final_decision_at: datetime | None = None
    label: Decision | None = None
    tags: list[str] = Field(default_factory=list)
    blind: bool = False


LeanStatus = Literal["ok", "error", "timeout", "unavailable"]


class LeanMessage(BaseModel):
    """A Lean message: `line` 1-based and `column` 0-based, in the code sent."""

    severity: str
    line: int
    column: int
    end_line: int | None
    end_column: int | None
    data: str


class LeanCheck(BaseModel):
    """A Lean server's answer about the pair (FaithScreen's docs/lean.md), as stored."""

    status: LeanStatus
    server_url: str
    server_version: str | None
    code: str
    timeout_seconds: int
    http_status: int | None
    messages: list[LeanMessage]
    goal: str | None
    detail: str | None
    error: str | None
    raw_body: str | None
    latency_ms: int | None
    attempts: int
    created_at: datetime
    # The Lean reader that read `raw_body` (`lean-2`); None on servers from before it was kept.
    reader_version: str | None = None


class Screening(ScreeningListed):
    """One screening whole: the pair, the outcome and reasons, evidence, every review, and
    its Lean check (`lean_status` is `not_checked` when no Lean server was asked)."""

    informal: str
    formal: str
    header: str
    confirmations: int
    judges: list[str] | None = None
    panel_rule: Literal["unanimous", "majority"] | None = None
    evidence: list[Evidence]
    evidence_version: str | None
    error: str | None
    reviews: list[Review]
    rulings: list[Ruling] = Field(default_factory=list)
    readings: list[Reading] = Field(default_factory=list)
    lean_status: Literal["ok", "error", "timeout", "unavailable", "not_checked"] = "not_checked"
    lean_check: LeanCheck | None = None


class ScreeningPage(BaseModel):
    items: list[ScreeningListed]
    next_cursor: str | None


class BatchAccepted(BaseModel):
    id: str
    name: str | None
    total: int
    status: BatchStatus


class BatchListed(BaseModel):
    id: str
    name: str | None
    total: int
    done: int
    status: BatchStatus
    created_at: datetime


class Failure(BaseModel):
    """Done items that ended on one cause (`<role>_provider_error`, `job_failed`)."""

    reason: str
    error: str
    count: int


class Batch(BatchListed):
    """A batch's progress: outcomes, parse statuses per role, failures by cause."""

    outcomes: dict[str, int]
    parse_statuses: dict[str, dict[str, int]]
    dead: int
    needed_provider: int
    provider_failed: int
    blind: int = 0
    failures: list[Failure]


class BatchPage(BaseModel):
    items: list[BatchListed]
    next_cursor: str | None


class BatchResult(BaseModel):
    """One line of a batch's results, in submission order (`index`, 0-based)."""

    index: int
    id: str
    external_id: str | None
    status: str
    outcome: str | None
    reasons: list[str] | None
    blind: bool = False
    # What the Lean server said; `not_checked` without one, null on a blind line.
    lean_status: Literal["ok", "error", "timeout", "unavailable", "not_checked"] | None = (
        "not_checked"
    )
