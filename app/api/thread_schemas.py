"""Bodies of the queue item's comment and assignment endpoints (app/api/routes/queue_threads.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.intake.requests import StorableText
from app.models.api_key import AccessRole
from app.models.review_thread import Assignment, Comment

# As a decision's note.
COMMENT_CHARS = 10_000
KEY_NAME_CHARS = 100


class CommentRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    body: Annotated[StorableText, Field(min_length=1, max_length=COMMENT_CHARS)] = Field(
        description="The comment (plain text; shown as written, never as HTML)."
    )


class CommentOut(BaseModel):
    id: int
    queue_item_id: int
    body: str
    actor: str = Field(description="The name of the key that wrote it.")
    actor_role: AccessRole
    created_at: datetime

    @classmethod
    def of(cls, row: Comment) -> CommentOut:
        return cls.model_validate(row, from_attributes=True)


class AssignRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    assignee: Annotated[StorableText, Field(min_length=1, max_length=KEY_NAME_CHARS)] | None = (
        Field(
            description="The key name to assign the item to; null to unassign it. A reviewer "
            "may name only themselves (403 `assign_self_only`) and unassign only an item "
            "assigned to them (403 `not_assignee`); an admin names any reviewer or admin key "
            "in use (else 422 `unknown_reviewer`)."
        )
    )


class AssignmentOut(BaseModel):
    """One row of an item's assignment trail: who assigned it to whom, when."""

    id: int
    queue_item_id: int
    assignee: str | None = Field(description="null: unassigned.")
    actor: str
    actor_role: AccessRole
    created_at: datetime

    @classmethod
    def of(cls, row: Assignment) -> AssignmentOut:
        return cls.model_validate(row, from_attributes=True)


class AssignedOut(BaseModel):
    queue_item_id: int
    assigned_to: str | None = Field(description="Who the item is assigned to now.")
    row: AssignmentOut | None = Field(
        description="The row the trail gained; null when the item was assigned so already."
    )
