"""Response bodies. Request bodies live with intake (app/intake/requests.py)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

from app.api.lean_schemas import LEAN_STATUS_DOC, LeanCheckOut, LeanStatusShown, lean_fields
from app.api.shown_text import (
    CUT_DOC,
    READING_TEXTS,
    REVIEW_TEXTS,
    cut_texts,
    raw_path,
    showable,
)
from app.models.review import Review
from app.models.screening import Screening
from app.vocabulary import Outcome, Priority, ScreeningStatus

# Every keyset-paginated listing's link to its next page.
NextCursor = Annotated[
    str | None, Field(description="Pass as `cursor` for the next page; null at the end.")
]


class ErrorDetail(BaseModel):
    """One problem. A request's validation error names `field` and `type`; a batch's
    names the item (`index`, and `line` for JSON Lines) and a `code`."""

    field: str | None = Field(
        description="Where the problem is, e.g. `options.confirmations`; null: the whole "
        "body (or batch item)."
    )
    message: str
    type: str | None = Field(default=None, description="The validation error's type.")
    code: str | None = Field(default=None, description="A batch item's error code.")
    index: int | None = Field(default=None, description="The batch item's position (0-based).")
    line: int | None = Field(default=None, description="The batch item's line (JSON Lines).")


class ErrorInfo(BaseModel):
    code: str = Field(description="Stable and machine-readable, e.g. `validation_error`.")
    message: str
    details: list[ErrorDetail] | None = Field(
        default=None,
        description="One entry per invalid field or batch item (validation errors only).",
    )


class ErrorBody(BaseModel):
    """The one shape of every error response."""

    error: ErrorInfo


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for these error statuses. Naming 422 here also replaces FastAPI's
    default 422 schema ({"detail": [...]}), which is not what this API sends."""
    return {status: {"model": ErrorBody} for status in statuses}


# Every route behind a key: no valid key (401), too low a role (403), no database (503).
GUARDED_RESPONSES = error_responses(401, 403, 503)


class Readiness(BaseModel):
    status: Literal["ready", "not_ready"]
    problems: list[str] = Field(
        description="Why not ready: the database does not answer, or its schema is not at "
        "the code's head revision. Empty when ready."
    )
    providers: dict[str, Literal["configured", "missing"]] = Field(
        description="Per role. A missing provider does not make the process unready: an "
        "API replica with --no-worker, or a service of supplied replies, needs none."
    )
    worker: Literal["running", "none"] = Field(
        description="Whether this process runs a worker. None with --no-worker, and when a "
        "role's provider is missing: such a process takes no screening job."
    )


PRIORITY_DOC = (
    "Which work is claimed first: every due `interactive` screening before any `batch` one "
    "(docs/api.md, Priorities and caps)."
)


class Accepted(BaseModel):
    id: str
    status: ScreeningStatus


class EvidenceOut(BaseModel):
    code: str
    message: str
    severity: str
    # Where the finding is (docs/evidence.md); null without a location, and in evidence
    # stored before evidence-3.
    field: Literal["formal", "informal", "header"] | None = Field(
        default=None, description="Which text the span is in."
    )
    line: int | None = Field(default=None, description="1-based line in that text (LF ends).")
    column: int | None = Field(
        default=None, description="0-based code-point offset of the span's start in the line."
    )
    end_column: int | None = Field(
        default=None, description="Exclusive end of the span, on the same line."
    )


JUDGE_NAME_DOC = (
    "Which judge: a panel judge's name (FAITHSCREEN_JUDGES), `judge` for the single judge; "
    "null for the translator."
)


def _judge_name(value: object) -> object:
    return None if value == "" else value  # a translator review stores no judge name


class ReviewOut(BaseModel):
    id: int = Field(description="Names the review in its raw endpoint (see `cut`).")
    role: str
    judge_name: str | None = Field(default=None, description=JUDGE_NAME_DOC)
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
    evidential: bool = Field(
        default=True,
        description="False when the model was marked not evidential "
        "(FAITHSCREEN_*_EVIDENTIAL=false) as the call was made: its FAITHFUL never counts "
        "towards `passed` (`<role>_non_evidential`).",
    )
    parser_version: str = Field(
        description="The reader that read the reply: `contract-4` (text, grammar), "
        "`tool-1`, `json-1`."
    )
    reply_format: str = Field(
        default="text",
        description="The reply format asked for (FAITHSCREEN_*_REPLY_FORMAT): text, grammar, "
        "tool or json; a supplied reply is text. For tool, the arguments are in the raw body.",
    )
    grammar_version: str | None = Field(
        default=None, description="The grammar decoded by (`grammar-1`), for `grammar` only."
    )
    prompt_version: str | None
    created_at: datetime
    cut: dict[str, int] = Field(default_factory=dict, description=CUT_DOC)

    _no_judge = field_validator("judge_name", mode="before")(_judge_name)

    @classmethod
    def of(cls, review: Review) -> ReviewOut:
        """The review with each provider text bounded (app/api/shown_text.py) and in UTF-8
        (a stored reply keeps a provider's lone surrogates: shown as U+FFFD)."""
        texts = {name: showable(getattr(review, name)) for name in REVIEW_TEXTS}
        shown, cut = cut_texts(texts, REVIEW_TEXTS, raw_path(review.screening_id, review.id))
        whole = cls.model_validate(review, from_attributes=True)
        return whole.model_copy(update=texts | shown | {"cut": cut})


BLIND_DOC = (
    "True when the screening's pair has a blind queue item (an audit a person decides "
    "without seeing what the models said) and the caller is a reviewer: its outcome, "
    "reasons, final decision, label and tags are withheld (null, or an empty list) until "
    "the item is resolved. Submitter and admin keys never see a screening blind."
)


class ScreeningSummary(BaseModel):
    id: str
    status: ScreeningStatus
    outcome: Outcome | None
    reasons: list[str] | None = Field(description="null only on a `blind` screening.")
    external_id: str | None
    batch_id: str | None
    priority: Priority = Field(description=PRIORITY_DOC)
    policy_version: str | None
    created_at: datetime
    finished_at: datetime | None
    # A person's decision from the review queue; it sits beside the outcome, which keeps
    # what the pipeline found and is never changed.
    final_decision: Literal["faithful", "mismatch"] | None = None
    final_decision_at: datetime | None = None
    label: Literal["faithful", "mismatch"] | None = Field(
        default=None, description="What the client said the pair is (for calibration)."
    )
    tags: list[str] = Field(default_factory=list)
    blind: bool = Field(default=False, description=BLIND_DOC)

    @classmethod
    def of(cls, screening: Screening) -> ScreeningSummary:
        return cls.model_validate(screening, from_attributes=True)

    def withheld(self) -> ScreeningSummary:
        """As a reviewer sees it while its queue item is blind: the outcome and all that
        tells it, gone."""
        hidden = dict.fromkeys(("outcome", "reasons", "final_decision", "final_decision_at"))
        return self.model_copy(update=hidden | {"label": None, "tags": [], "blind": True})


class RulingOut(BaseModel):
    """An outcome this screening has had, under the versions that decided it."""

    outcome: Outcome
    reasons: list[str]
    parser_version: str
    policy_version: str
    evidence_version: str
    rescore_id: str | None = Field(description="The re-scoring run; null for the pipeline's.")
    created_at: datetime


class ReadingOut(BaseModel):
    """A stored reply (the review `role`/`judge_name`/`attempt`) read again by a re-scoring
    run."""

    role: str
    judge_name: str | None = Field(default=None, description=JUDGE_NAME_DOC)
    attempt: int
    verdict: str
    parse_status: str
    back_translation: str | None
    issues: str | None
    parser_version: str
    rescore_id: str
    created_at: datetime
    cut: dict[str, int] = Field(default_factory=dict, description=CUT_DOC)

    _no_judge = field_validator("judge_name", mode="before")(_judge_name)

    def bounded(self, whole_at: str) -> ReadingOut:
        """The reading with its texts bounded; `whole_at`: the reply's raw endpoint."""
        shown, cut = cut_texts(self.__dict__, READING_TEXTS, whole_at)
        return self.model_copy(update=shown | {"cut": cut}) if cut else self


class ScreeningOut(ScreeningSummary):
    informal: str
    formal: str
    header: str
    confirmations: int
    judges: list[str] | None = Field(
        default=None,
        description="The judge panel it was screened by (FAITHSCREEN_JUDGES); null for the "
        "single judge.",
    )
    panel_rule: Literal["unanimous", "majority"] | None = Field(
        default=None, description="How the panel's votes combined; null for the single judge."
    )
    evidence: list[EvidenceOut]
    evidence_version: str | None
    error: str | None
    reviews: list[ReviewOut]
    rulings: list[RulingOut] = Field(
        default_factory=list,
        description="Every outcome it has had, oldest first, once a re-scoring moved it "
        "(empty until then: the outcome above is the pipeline's).",
    )
    readings: list[ReadingOut] = Field(
        default_factory=list,
        description="Its reviews read again by re-scoring runs, oldest first; the reviews "
        "above are never changed.",
    )
    lean_status: LeanStatusShown = Field(default="not_checked", description=LEAN_STATUS_DOC)
    lean_check: LeanCheckOut | None = Field(
        default=None, description="The Lean server's answer, stored as received (docs/lean.md)."
    )

    @classmethod
    def of(
        cls,
        screening: Screening,
        rulings: Sequence[object] = (),
        readings: Sequence[object] = (),
    ) -> ScreeningOut:
        """`rulings` and `readings`: rows with the fields of RulingOut and ReadingOut
        (repositories.rescores.history gives them)."""
        data: dict[str, Any] = ScreeningSummary.of(screening).model_dump()
        pair = screening.pair
        return cls(
            **data,
            informal=pair.informal,
            formal=pair.formal,
            header=pair.header,
            confirmations=screening.confirmations,
            judges=screening.judges,
            panel_rule=screening.panel_rule,
            evidence=[EvidenceOut(**e) for e in screening.evidence],
            evidence_version=screening.evidence_version,
            error=screening.error,
            reviews=[ReviewOut.of(r) for r in screening.reviews],
            rulings=[RulingOut.model_validate(r, from_attributes=True) for r in rulings],
            readings=_bounded_readings(screening, readings),
            **lean_fields(screening.lean_check),
        )


def _bounded_readings(screening: Screening, rows: Sequence[object]) -> list[ReadingOut]:
    """Each reading bounded, its marker pointing at the raw reply of the review it read."""
    paths = {
        (str(r.role), r.judge_name or None, r.attempt): raw_path(screening.id, r.id)
        for r in screening.reviews
    }
    readings = [ReadingOut.model_validate(row, from_attributes=True) for row in rows]
    # A re-scoring run reads stored replies only, so each reading has its review.
    return [r.bounded(paths.get((r.role, r.judge_name, r.attempt), "")) for r in readings]


class ScreeningPage(BaseModel):
    items: list[ScreeningSummary]
    next_cursor: NextCursor
