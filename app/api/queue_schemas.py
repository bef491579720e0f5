"""Bodies of the review queue and decisions endpoints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from app.api.schemas import NextCursor, ScreeningOut
from app.auth.principal import Principal
from app.intake.requests import StorableText
from app.models.api_key import AccessRole
from app.models.decision import DEFECTS, Decision
from app.models.screening import Screening
from app.review_queue.service import ItemDetail, QueueEntry, QueuePage
from app.review_queue.visibility import (
    BlindMode,
    audit_withheld,
    hidden_trail_rows,
    item_blind_for,
)
from app.vocabulary import DecisionKind, DecisionValue, Outcome, QueueStatus

Note = Annotated[StorableText, Field(max_length=10_000, description="Why, in a few words.")]


BLIND_ITEM_DOC = (
    "Decided blind: until the item is resolved the caller sees the pair (and header) only, "
    "none of the outcome, reasons, evidence, reviews, back-translations, rulings or label "
    "(FAITHSCREEN_REVIEW_BLIND: `audit` items by default, `all`, or `off`); an older, "
    "resolved item of the pair is shown so too while a blind one waits. Admins never see "
    "an item blind."
)


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who reads the queue, under which FAITHSCREEN_REVIEW_BLIND mode: what they may see."""

    principal: Principal
    mode: BlindMode

    def blind(self, entry: QueueEntry) -> bool:
        return item_blind_for(
            self.principal,
            self.mode,
            audit=entry.item.audit,
            resolved=entry.status is QueueStatus.RESOLVED,
            pair_audit=entry.pair_audit,
        )

    def hidden_rows(self, entry: QueueEntry, trail: Sequence[Decision]) -> set[int]:
        awaiting = entry.status is QueueStatus.AWAITING_SECOND
        return hidden_trail_rows(self.principal, trail, awaiting_second=awaiting)


class QueueItemSummary(BaseModel):
    id: int
    screening_id: str = Field(description="The screening that opened the item.")
    screening_ids: list[str] = Field(
        description="Every screening the item answers for, the opening one first: a new "
        "screening of the same pair (informal, formal and header) that needs a person joins "
        "the pair's unresolved item, and its decision applies to each."
    )
    status: QueueStatus = Field(description="As of now: a claim whose lease lapsed is `open`.")
    blind: bool = Field(description=BLIND_ITEM_DOC)
    reasons: list[str] | None = Field(description="null while the item is `blind`.")
    audit: bool | None = Field(
        description="A random sample of a passed or flagged outcome. null on a blind item "
        "under FAITHSCREEN_REVIEW_BLIND=all, where it would tell the outcome."
    )
    double_review: bool = Field(
        description="Sampled at FAITHSCREEN_REVIEW_DOUBLE_RATE: two different people decide; "
        "until both have, nobody but admins sees the first decision."
    )
    batch_id: str | None
    outcome: Outcome | None = Field(description="null while the item is `blind`.")
    external_id: str | None
    final_decision: DecisionValue | None = Field(description="null while the item is `blind`.")
    claimed_by: str | None
    claim_expires_at: datetime | None
    assigned_to: str | None = Field(
        default=None, description="The key name the item is assigned to (null: nobody)."
    )
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None

    @classmethod
    def of(cls, entry: QueueEntry, viewer: Viewer) -> QueueItemSummary:
        item, screening = entry.item, entry.item.screening
        live_claim = entry.status in (QueueStatus.CLAIMED, QueueStatus.AWAITING_SECOND)
        blind = viewer.blind(entry)
        sighted = not blind
        return cls(
            id=item.id,
            screening_id=item.screening_id,
            # Blind, only the item's own screening: which later screenings of the pair
            # joined it (a needs_review one always does) would hint at their outcomes.
            screening_ids=list(entry.screening_ids) if sighted else [item.screening_id],
            status=entry.status,
            blind=blind,
            reasons=list(item.reasons) if sighted else None,
            audit=None if blind and audit_withheld(viewer.mode) else item.audit,
            double_review=item.double_review,
            batch_id=item.batch_id,
            outcome=screening.outcome if sighted else None,
            external_id=screening.external_id,
            final_decision=screening.final_decision if sighted else None,
            claimed_by=item.claimed_by if live_claim else None,
            claim_expires_at=item.claim_expires_at if live_claim else None,
            assigned_to=entry.assigned_to,
            created_at=item.created_at,
            updated_at=item.updated_at,
            resolved_at=item.resolved_at,
        )


class DecisionOut(BaseModel):
    """One row of an item's trail."""

    id: int
    kind: DecisionKind
    decision: DecisionValue | None = Field(description="null for a `reopen` or `withdrawal`.")
    note: str
    defects: list[str] = Field(
        description="What is wrong with the pair, from the fixed vocabulary: "
        + ", ".join(f"`{d}`" for d in DEFECTS)
        + "."
    )
    blind: bool = Field(description="Decided without seeing what the models said.")
    claimed_at: datetime | None = Field(description="When the decider's claim began.")
    opened_at: datetime | None = Field(
        default=None,
        description="When the decider first opened the item (GET /v1/queue/{id} or its "
        "page), since its last reopen: their time on it runs from here. null without one.",
    )
    withdraws_id: int | None = Field(description="On a `withdrawal`: the decision taken back.")
    actor: str = Field(description="The name of the key that acted.")
    actor_role: AccessRole
    created_at: datetime

    @classmethod
    def of(cls, row: Decision) -> DecisionOut:
        return cls.model_validate(row, from_attributes=True)


class ReviewerScreeningOut(ScreeningOut):
    """A screening as a reviewer sees it: without the client's label and tags, which
    would tell the person the answer (or hint at it) before they decide."""

    label: SkipJsonSchema[None] = Field(default=None, exclude=True)
    tags: SkipJsonSchema[list[str]] = Field(default_factory=list, exclude=True)
    blind: Literal[False] = False

    @classmethod
    def withholding(cls, screening: ScreeningOut) -> ReviewerScreeningOut:
        return cls.model_validate(screening.model_dump(exclude={"label", "tags", "blind"}))


class BlindScreeningOut(BaseModel):
    """A screening of a blind item: the pair and where it came from, nothing the models
    said."""

    blind: Literal[True] = True
    id: str
    external_id: str | None
    batch_id: str | None
    informal: str
    formal: str
    header: str
    created_at: datetime

    @classmethod
    def of(cls, screening: Screening) -> BlindScreeningOut:
        pair = screening.pair
        return cls(
            id=screening.id,
            external_id=screening.external_id,
            batch_id=screening.batch_id,
            informal=pair.informal,
            formal=pair.formal,
            header=pair.header,
            created_at=screening.created_at,
        )


class QueueItemOut(QueueItemSummary):
    screening: ReviewerScreeningOut | BlindScreeningOut = Field(
        description="The pair, evidence, reasons, and every review with its raw reply; on a "
        "`blind` item the pair only (`blind: true`)."
    )
    trail: list[DecisionOut] = Field(
        description="Decisions, withdrawals, reopens and adjudications, oldest first. While "
        "a double review awaits its second decision, a non-admin sees no row another person "
        "added since the last reopen (the first decision among them)."
    )

    @classmethod
    def of_detail(cls, detail: ItemDetail, viewer: Viewer) -> QueueItemOut:
        summary = QueueItemSummary.of(detail.entry, viewer)
        hidden = viewer.hidden_rows(detail.entry, detail.trail)
        return cls(
            **summary.model_dump(),
            screening=BlindScreeningOut.of(detail.screening)
            if summary.blind
            else ReviewerScreeningOut.withholding(
                ScreeningOut.of(detail.screening, detail.rulings, detail.readings)
            ),
            trail=[DecisionOut.of(row) for row in detail.trail if row.id not in hidden],
        )


class QueuePageOut(BaseModel):
    items: list[QueueItemSummary]
    next_cursor: NextCursor

    @classmethod
    def of(cls, page: QueuePage, viewer: Viewer) -> QueuePageOut:
        items = [QueueItemSummary.of(entry, viewer) for entry in page.entries]
        return cls(items=items, next_cursor=page.next_cursor)


DEFECTS_DOC = (
    "What is wrong with the pair, from a fixed vocabulary (not a screening's free-form "
    "`tags`): "
    + ", ".join(f"`{d}`" for d in DEFECTS)
    + ". Another name is refused (422 `unknown_defect`, with the `allowed` ones); each "
    "counts once. `faithful` takes none (422 `defects_need_mismatch`)."
)
DefectName = Annotated[
    StorableText, Field(max_length=64, json_schema_extra={"enum": list(DEFECTS)})
]


class DecisionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision: DecisionValue = Field(
        description="`faithful` or `mismatch` (a mismatch needs a non-empty `note` or at "
        "least one defect: else 422 `note_or_defects_required`), or `unsure`: it needs a "
        "note (422 `note_required`), records your doubt, and gives the item back to the "
        "queue unresolved."
    )
    note: Note = ""
    defects: list[DefectName] = Field(
        default_factory=list, max_length=len(DEFECTS), description=DEFECTS_DOC
    )


class AdjudicationRequest(DecisionRequest):
    """An admin's ruling on a disputed double review: `faithful` or `mismatch` (`unsure`
    is refused, 422 `final_decision_required`), with the same rules for note and defects."""


class ReopenRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    note: Note = ""
