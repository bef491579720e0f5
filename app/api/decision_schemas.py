"""Answers of the decision endpoints (decide, undo, adjudicate, reopen) and of
/v1/decisions/conflicts. Their request bodies are in queue_schemas.py."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.api.queue_schemas import DecisionOut
from app.api.schemas import NextCursor
from app.repositories.decision_conflicts import DecidedItem, PairConflict
from app.review_queue.service import ConflictPage, Decided
from app.vocabulary import DecisionValue, QueueStatus


class DecidedOut(DecisionOut):
    """The row the trail gained, and where the item is now."""

    item_status: QueueStatus = Field(
        description="`resolved`; `awaiting_second` after a double review's first decision; "
        "`disputed` when its second disagrees; `open` after `unsure` (or `awaiting_second` "
        "if it was); `claimed` (by you) after an undo."
    )
    final: bool = Field(
        description="No undo can withdraw this row: an adjudication, or a decision that "
        "settled the item (`resolved` or `disputed`) and was made blind or as a double "
        "review's second, since settling it showed what it was decided without. Only an "
        "admin's reopen sends the item back. false for a decision still withdrawable "
        "within FAITHSCREEN_REVIEW_UNDO_SECONDS, and for a withdrawal or reopen."
    )

    @classmethod
    def of_decided(cls, decided: Decided) -> DecidedOut:
        row = DecisionOut.of(decided.row).model_dump()
        return cls(**row, item_status=decided.status, final=decided.final)


class DecidedItemOut(BaseModel):
    queue_item_id: int
    decision: DecisionValue
    decided_by: str = Field(description="Who resolved it (an adjudication's admin included).")
    decided_at: datetime
    screening_ids: list[str] = Field(description="The screenings it answers for.")

    @classmethod
    def of(cls, item: DecidedItem) -> DecidedItemOut:
        return cls(
            queue_item_id=item.queue_item_id,
            decision=item.decision,
            decided_by=item.decided_by,
            decided_at=item.decided_at,
            screening_ids=item.screening_ids,
        )


class PairConflictOut(BaseModel):
    pair_id: int
    informal: str
    formal: str
    header: str
    items: list[DecidedItemOut] = Field(
        description="Its resolved queue items, oldest decision first: both final decisions "
        "are among them."
    )

    @classmethod
    def of(cls, conflict: PairConflict) -> PairConflictOut:
        pair = conflict.pair
        return cls(
            pair_id=pair.id,
            informal=pair.informal,
            formal=pair.formal,
            header=pair.header,
            items=[DecidedItemOut.of(item) for item in conflict.items],
        )


class ConflictPageOut(BaseModel):
    conflicts: list[PairConflictOut]
    next_cursor: NextCursor

    @classmethod
    def of(cls, page: ConflictPage) -> ConflictPageOut:
        conflicts = [PairConflictOut.of(conflict) for conflict in page.conflicts]
        return cls(conflicts=conflicts, next_cursor=page.next_cursor)
