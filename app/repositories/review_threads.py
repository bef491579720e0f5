"""A queue item's openings, comments and assignments (app/models/review_thread.py): SQL
only; who may see or do what is app/review_queue/threads.py's to say."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import cast

from sqlalchemy import ColumnElement, Table, delete, exists, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.api_key import AccessRole
from app.models.queue_item import QueueItem
from app.models.review_thread import Assignment, Comment, ItemOpening

# ---- Openings -------------------------------------------------------------------------------


async def open_item(session: AsyncSession, item_id: int, actor: str, at: datetime) -> None:
    """Record that `actor` opened the item at `at`, unless they opened it before (the first
    opening stands). Looked up first, so a page read writes nothing once it has."""
    if await opened_at(session, item_id, actor) is not None:
        return
    dialect = session.get_bind().dialect.name
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    row = {"queue_item_id": item_id, "actor": actor, "opened_at": at}
    statement = insert_of(cast(Table, ItemOpening.__table__)).values(row)
    # Two tabs opening at once: the first insert stands, the second does nothing.
    await session.execute(statement.on_conflict_do_nothing())


async def opened_at(session: AsyncSession, item_id: int, actor: str) -> datetime | None:
    statement = select(ItemOpening.opened_at).where(
        ItemOpening.queue_item_id == item_id, ItemOpening.actor == actor
    )
    return (await session.execute(statement)).scalar_one_or_none()


async def forget_openings(session: AsyncSession, item_id: int) -> None:
    """A reopened item starts a new round: each reviewer's time runs from their next
    opening (the decisions made keep theirs)."""
    await session.execute(delete(ItemOpening).where(ItemOpening.queue_item_id == item_id))


# ---- Comments -------------------------------------------------------------------------------


async def add_comment(
    session: AsyncSession,
    *,
    item_id: int,
    body: str,
    actor: str,
    actor_role: AccessRole,
    at: datetime,
) -> Comment:
    row = Comment(
        queue_item_id=item_id, body=body, actor=actor, actor_role=actor_role, created_at=at
    )
    session.add(row)
    await session.flush()
    return row


async def comments_of(session: AsyncSession, item_id: int) -> list[Comment]:
    """The item's comments, oldest first."""
    statement = select(Comment).where(Comment.queue_item_id == item_id).order_by(Comment.id)
    return list((await session.execute(statement)).scalars())


# ---- Assignments ----------------------------------------------------------------------------


async def assign(
    session: AsyncSession,
    *,
    item_id: int,
    assignee: str | None,
    actor: str,
    actor_role: AccessRole,
    at: datetime,
) -> Assignment:
    row = Assignment(
        queue_item_id=item_id, assignee=assignee, actor=actor, actor_role=actor_role, created_at=at
    )
    session.add(row)
    await session.flush()
    return row


def _latest() -> ColumnElement[bool]:
    """A condition on `Assignment`: it is its item's latest row."""
    later = aliased(Assignment)
    return ~exists(
        select(1).where(later.queue_item_id == Assignment.queue_item_id, later.id > Assignment.id)
    )


async def assignees(session: AsyncSession, item_ids: Collection[int]) -> dict[int, str]:
    """Who each of these items is assigned to now (absent: nobody)."""
    if not item_ids:
        return {}
    statement = select(Assignment.queue_item_id, Assignment.assignee).where(
        Assignment.queue_item_id.in_(sorted(item_ids)), _latest()
    )
    return {item: who for item, who in await session.execute(statement) if who is not None}


async def assignments_of(session: AsyncSession, item_id: int) -> list[Assignment]:
    """The item's assignment trail, oldest first."""
    statement = (
        select(Assignment).where(Assignment.queue_item_id == item_id).order_by(Assignment.id)
    )
    return list((await session.execute(statement)).scalars())


def assigned_to(name: str) -> ColumnElement[bool]:
    """A condition on `QueueItem`: its latest assignment names `name` (the "mine" filter)."""
    return exists(
        select(1).where(
            Assignment.queue_item_id == QueueItem.id, Assignment.assignee == name, _latest()
        )
    )
