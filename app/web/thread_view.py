"""What the item page shows of its comment thread and assignment (the rules are
app/review_queue/threads.py's; the posts are app/web/thread_pages.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.api.queue_schemas import QueueItemOut
from app.api.thread_schemas import COMMENT_CHARS
from app.models.api_key import AccessRole
from app.review_queue import threads
from app.review_queue.visibility import BlindMode
from app.vocabulary import QueueStatus
from app.web.access import Reviewer

# Fixed wording for `?done=` after a thread post (app/web/routes.py DONE_MESSAGES).
DONE_MESSAGES = {
    "commented": "Comment added.",
    "assigned": "Assignment changed.",
}


async def thread_context(
    session: AsyncSession, reviewer: Reviewer, item: QueueItemOut, mode: BlindMode
) -> dict[str, Any]:
    """What item.html's thread and assignment parts read."""
    principal = reviewer.principal
    admin = principal.allows(AccessRole.ADMIN)
    comments = await threads.comments_for(session, principal, item.id, mode=mode)
    open_item = item.status is not QueueStatus.RESOLVED
    return {
        "comments": comments,
        "comment_limit": COMMENT_CHARS,
        # The rule of threads.visible_comments, said where it applies.
        "comments_withheld": not admin
        and (item.blind or item.status is QueueStatus.AWAITING_SECOND),
        "assignee": item.assigned_to,
        "can_take": open_item and item.assigned_to != principal.name,
        "can_give_back": item.assigned_to is not None and item.assigned_to == principal.name,
        "assignable": await threads.assignable_names(session, principal) if open_item else [],
    }
