"""What the queue page shows: one row per item (the external ids of every screening it
answers for, a one-line preview of the informal statement, claimant, status, batch by
name), the queue's totals by status, and the reason filter as a choice of the policy's
codes.

The listing is the API's (service.list_items, QueuePageOut with the same blind rule), so
a blind item shows here exactly what GET /v1/queue shows: no outcome and no reasons.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.api.queue_schemas import QueueItemSummary, QueuePageOut
from app.policy import Reason
from app.repositories import queue_page
from app.vocabulary import QueueStatus
from app.web.math_text import plain_text

PREVIEW_CHARS = 160
# External ids named in a row; the rest are counted ("+2 more") and listed in its title.
SHOWN_EXTERNAL_IDS = 3
_SPACES = re.compile(r"\s+")
REASON_CODES = tuple(reason.value for reason in Reason)
# The totals' order and wording.
TOTALS = (
    (QueueStatus.OPEN, "open"),
    (QueueStatus.CLAIMED, "claimed"),
    (QueueStatus.AWAITING_SECOND, "awaiting second"),
    (QueueStatus.DISPUTED, "disputed"),
    (QueueStatus.RESOLVED, "resolved"),
)


@dataclass(frozen=True, slots=True)
class QueueRow:
    item: QueueItemSummary
    preview: str
    # Every screening's external id, the opening one first, each once.
    external_ids: tuple[str, ...]
    # The batch's name, or the start of its id for a batch without one.
    batch_label: str | None

    @property
    def shown_external_ids(self) -> tuple[str, ...]:
        return self.external_ids[:SHOWN_EXTERNAL_IDS]

    @property
    def more_external_ids(self) -> tuple[str, ...]:
        return self.external_ids[SHOWN_EXTERNAL_IDS:]


@dataclass(frozen=True, slots=True)
class Total:
    status: str
    label: str
    count: int


def one_line(text: str) -> str:
    """The statement's start on one line as plain text (its LaTeX laid out or shortened to
    Unicode, app/web/math_text.plain_text), cut at PREVIEW_CHARS with an ellipsis."""
    flat = _SPACES.sub(" ", plain_text(text)).strip()
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


async def queue_rows(session: AsyncSession, listing: QueuePageOut) -> list[QueueRow]:
    items = listing.items
    previews = await queue_page.informal_previews(session, {i.screening_id for i in items})
    batch_ids = {i.batch_id for i in items if i.batch_id is not None}
    names = await queue_page.batch_names(session, batch_ids)
    known = await queue_page.external_ids(session, {s for i in items for s in i.screening_ids})
    return [
        QueueRow(
            item=i,
            preview=one_line(previews.get(i.screening_id, "")),
            external_ids=tuple(dict.fromkeys(known[s] for s in i.screening_ids if s in known)),
            batch_label=names.get(i.batch_id, i.batch_id[:8]) if i.batch_id else None,
        )
        for i in items
    ]


async def totals(session: AsyncSession, *, now: datetime) -> list[Total]:
    counted = await queue_page.status_totals(session, now=now)
    return [Total(status.value, label, counted[status]) for status, label in TOTALS]


def reason_choices(current: str | None) -> list[str]:
    """The policy's reason codes, and the filter's own value when it is none of them (a
    full `evidence_review:<finding>` typed into the address)."""
    extra = [current] if current and current not in REASON_CODES else []
    return [*extra, *REASON_CODES]
