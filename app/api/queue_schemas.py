"""Bodies of the review queue, decisions and keys endpoints."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from app.api.schemas import ScreeningOut
from app.auth.principal import AccessRole
from app.auth.service import CreatedKey
from app.intake.requests import StorableText
from app.models.api_key import ApiKey
from app.models.decision import DEFECTS, Decision, DecisionKind, DecisionValue
from app.models.queue_item import QueueStatus
from app.review_queue.service import ItemDetail, QueueEntry, QueuePage
from app.vocabulary import Outcome

Note = Annotated[StorableText, Field(max_length=10_000, description="Why, in a few words.")]


class QueueItemSummary(BaseModel):
    id: int
    screening_id: str = Field(description="The screening that opened the item.")
    screening_ids: list[str] = Field(
        description="Every screening the item answers for, the opening one first: a new "
        "screening of the same pair (informal, formal and header) that needs a person joins "
        "the pair's unresolved item, and its decision applies to each."
    )
    status: QueueStatus = Field(description="As of now: a claim whose lease lapsed is `open`.")
    reasons: list[str]
    audit: bool = Field(description="A random sample of a passed or flagged outcome.")
    batch_id: str | None
    outcome: Outcome | None
    external_id: str | None
    final_decision: DecisionValue | None
    claimed_by: str | None
    claim_expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None

    @classmethod
    def of(cls, entry: QueueEntry) -> QueueItemSummary:
        item, screening = entry.item, entry.item.screening
        live_claim = entry.status is QueueStatus.CLAIMED
        return cls(
            id=item.id,
            screening_id=item.screening_id,
            screening_ids=list(entry.screening_ids) or [item.screening_id],
            status=entry.status,
            reasons=list(item.reasons),
            audit=item.audit,
            batch_id=item.batch_id,
            outcome=Outcome(screening.outcome) if screening.outcome else None,
            external_id=screening.external_id,
            final_decision=DecisionValue(screening.final_decision)
            if screening.final_decision
            else None,
            claimed_by=item.claimed_by if live_claim else None,
            claim_expires_at=item.claim_expires_at if live_claim else None,
            created_at=item.created_at,
            updated_at=item.updated_at,
            resolved_at=item.resolved_at,
        )


class DecisionOut(BaseModel):
    """One row of an item's trail."""

    id: int
    kind: DecisionKind
    decision: DecisionValue | None = Field(description="null for a `reopen`.")
    note: str
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

    @classmethod
    def withholding(cls, screening: ScreeningOut) -> ReviewerScreeningOut:
        return cls.model_validate(screening.model_dump(exclude={"label", "tags"}))


class QueueItemOut(QueueItemSummary):
    screening: ReviewerScreeningOut = Field(
        description="The pair, evidence, reasons, and every review with its raw reply."
    )
    trail: list[DecisionOut] = Field(description="Decisions and reopens, oldest first.")

    @classmethod
    def of_detail(cls, detail: ItemDetail) -> QueueItemOut:
        return cls(
            **QueueItemSummary.of(detail.entry).model_dump(),
            screening=ReviewerScreeningOut.withholding(
                ScreeningOut.of(detail.screening, detail.rulings, detail.readings)
            ),
            trail=[DecisionOut.of(row) for row in detail.trail],
        )


class QueuePageOut(BaseModel):
    items: list[QueueItemSummary]
    next_cursor: str | None = Field(
        description="Pass as `cursor` for the next page; null at the end."
    )

    @classmethod
    def of(cls, page: QueuePage) -> QueuePageOut:
        items = [QueueItemSummary.of(entry) for entry in page.entries]
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


# ---- Keys -----------------------------------------------------------------------------------


class KeyOut(BaseModel):
    """A key as lists show it: never the key itself."""

    name: str
    role: AccessRole
    prefix: str = Field(description="The key's first characters, to tell keys apart.")
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None = Field(description="Updated at most once a minute.")

    @classmethod
    def of(cls, record: ApiKey) -> KeyOut:
        return cls(
            name=record.name,
            role=AccessRole(record.role),
            prefix=record.key_prefix,
            created_at=record.created_at,
            revoked_at=record.revoked_at,
            last_used_at=record.last_used_at,
        )


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=100)
    role: AccessRole


class KeyCreated(KeyOut):
    key: str = Field(description="The key: shown this once, stored only as a hash.")

    @classmethod
    def of_created(cls, created: CreatedKey) -> KeyCreated:
        return cls(**KeyOut.of(created.record).model_dump(), key=created.key)
