"""The decisions as a labelled dataset: one JSON line per decision (kind `decision`), in
the order they were made, read from the database page by page as the lines are sent.

A decision an admin later reopened stays in the export with `"superseded": true`, so the
file holds every judgement ever made and a consumer picks the current ones."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth.errors import require_role
from app.auth.principal import AccessRole, Principal
from app.repositories import decisions
from app.repositories.decisions import ExportRow

# Decisions read per query.
EXPORT_PAGE = 500


def export_record(row: ExportRow) -> dict[str, Any]:
    decision, item, screening, pair = row.decision, row.item, row.screening, row.pair
    return {
        "decision_id": decision.id,
        "queue_item_id": item.id,
        "screening_id": screening.id,
        "external_id": screening.external_id,
        "batch_id": screening.batch_id,
        "informal": pair.informal,
        "formal": pair.formal,
        "header": pair.header,
        "outcome": screening.outcome,
        "reasons": list(screening.reasons),
        "policy_version": screening.policy_version,
        "audit": item.audit,
        "decision": decision.decision,
        "note": decision.note,
        "reviewer": decision.actor,
        "reviewer_role": decision.actor_role,
        "decided_at": decision.created_at.isoformat(),
        "superseded": row.superseded,
    }


def export_lines(
    sessions: async_sessionmaker[AsyncSession], principal: Principal, *, after: int = 0
) -> AsyncIterator[bytes]:
    """The JSONL lines of every decision with an id above `after`. The role is checked
    here, before the first line: a refusal must come before a response starts."""
    require_role(principal, AccessRole.REVIEWER)
    return _lines(sessions, after)


async def _lines(sessions: async_sessionmaker[AsyncSession], after: int) -> AsyncIterator[bytes]:
    while True:
        # A short session per page: the stream may take long, a transaction must not.
        async with sessions() as session:
            page = await decisions.export_page(session, after=after, limit=EXPORT_PAGE)
        if page:
            yield b"".join(_line(row) for row in page)
        if len(page) < EXPORT_PAGE:
            return
        after = page[-1].decision.id


def _line(row: ExportRow) -> bytes:
    text = json.dumps(export_record(row), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8") + b"\n"
