"""The decisions as a labelled dataset: one JSON line per decision (kind `decision`, and
an admin's `adjudication`) and screening it applies to -- an item answers for every
screening of its pair that waited on it, the opening one first -- in the order the
decisions were made, read from the database page by page as the lines are sent. As CSV
(`?format=csv`), the same records are rows under a header (EXPORT_COLUMNS), written by
app/csv_rows.py, which keeps a note or a statement from running as a formula.

A decision later set aside stays in the export with `"superseded": true` (an admin
reopened the item, an adjudication settled its dispute, or its decider withdrew it:
`"withdrawn": true`), so the file holds every judgement ever made and a consumer picks the
current ones. `defects` name what is wrong, `blind` says whether the person decided
without seeing what the models said. `lean_status` says what a Lean server said of the
pair (`not_checked` without one), with its elaborated goal and its errors as
`line:column: message` (docs/lean.md).

A non-admin's export leaves out what the queue would not show them yet: decisions on an
item that is blind to them (an unresolved audit under FAITHSCREEN_REVIEW_BLIND, or an
older item of a pair that has one), whose lines would tell its outcome, and those on a
double review awaiting its second decision, which nobody but admins sees until both are
in. They appear once the item is resolved (a consumer paging with `after` should re-read
from before them: their ids are older)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.auth.errors import require_role
from app.auth.principal import Principal
from app.csv_rows import csv_header, csv_row
from app.json_lines import json_line
from app.models.api_key import AccessRole
from app.models.lean_check import LeanCheck
from app.repositories import blind_items, decisions, lean_checks
from app.repositories.decisions import ExportRow
from app.review_queue.visibility import BlindMode, item_blind_for
from app.vocabulary import LEAN_NOT_CHECKED, QueueStatus

# Decisions read per query.
EXPORT_PAGE = 500
# The fields of each record, in order: the CSV export's columns.
EXPORT_COLUMNS = (
    "decision_id", "queue_item_id", "screening_id", "external_id", "batch_id", "informal",
    "formal", "header", "outcome", "reasons", "policy_version", "audit", "double_review",
    "kind", "decision", "note", "defects", "blind", "reviewer", "reviewer_role",
    "decided_at", "superseded", "withdrawn", "lean_status", "lean_goal", "lean_errors",
    "lean_reader_version",
)  # fmt: skip


def export_record(row: ExportRow, lean: LeanCheck | None = None) -> dict[str, Any]:
    """`lean`: the screening's Lean check, if a Lean server was asked."""
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
        "double_review": item.double_review,
        "kind": decision.kind,
        "decision": decision.decision,
        "note": decision.note,
        "defects": list(decision.defects),
        "blind": decision.blind,
        "reviewer": decision.actor,
        "reviewer_role": decision.actor_role,
        "decided_at": decision.created_at.isoformat(),
        "superseded": row.superseded,
        "withdrawn": row.withdrawn,
        **lean_record(lean),
    }


def lean_record(lean: LeanCheck | None) -> dict[str, Any]:
    if lean is None:
        return {
            "lean_status": LEAN_NOT_CHECKED,
            "lean_goal": None,
            "lean_errors": [],
            "lean_reader_version": None,
        }
    errors = [m for m in lean.messages if m.get("severity") == "error"]
    return {
        "lean_status": lean.status.value,
        "lean_goal": lean.goal,
        "lean_errors": [f"{m['line']}:{m['column']}: {m['data']}" for m in errors],
        # The reader that read the stored body into that status (docs/lean.md).
        "lean_reader_version": lean.reader_version,
    }


def export_lines(
    sessions: async_sessionmaker[AsyncSession],
    principal: Principal,
    *,
    after: int = 0,
    blind_mode: BlindMode = "audit",
    as_csv: bool = False,
) -> AsyncIterator[bytes]:
    """The JSONL lines of every decision with an id above `after` that `principal` may see
    (see the module docstring), or with `as_csv` the same records as CSV rows under a
    header. The role is checked here, before the first line: a refusal must come before
    a response starts."""
    require_role(principal, AccessRole.REVIEWER)
    lines = _lines(
        sessions,
        after,
        lambda row, pairs: _shown(row, pairs, principal, blind_mode),
        _csv_line if as_csv else _line,
    )
    return _after_header(lines) if as_csv else lines


async def _after_header(lines: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield csv_header(EXPORT_COLUMNS)
    async for line in lines:
        yield line


# Per item id, the audit flag of another unresolved item of its pair (blind_items.pair_audits).
PairAudits = dict[int, bool | None]


async def _lines(
    sessions: async_sessionmaker[AsyncSession],
    after: int,
    shown: Callable[[ExportRow, PairAudits], bool],
    line_of: Callable[[ExportRow, LeanCheck | None], bytes],
) -> AsyncIterator[bytes]:
    while True:
        # A short session per page: the stream may take long, a transaction must not.
        async with sessions() as session:
            page = await decisions.export_page(session, after=after, limit=EXPORT_PAGE)
            pairs = await blind_items.pair_audits(session, [row.item for row in page])
            ids = list({row.screening.id for row in page})
            lean = await lean_checks.for_screenings(session, ids)
        lines = b"".join(
            line_of(row, lean.get(row.screening.id)) for row in page if shown(row, pairs)
        )
        if lines:
            yield lines
        # A page holds every line of its decisions: fewer decisions than asked, the end.
        if len({row.decision.id for row in page}) < EXPORT_PAGE:
            return
        after = page[-1].decision.id


def _shown(row: ExportRow, pairs: PairAudits, principal: Principal, mode: BlindMode) -> bool:
    item = row.item
    if principal.role is AccessRole.ADMIN:
        return True
    blind = item_blind_for(
        principal,
        mode,
        audit=item.audit,
        resolved=item.status is QueueStatus.RESOLVED,
        pair_audit=pairs[item.id],
    )
    return not blind and item.status is not QueueStatus.AWAITING_SECOND


def _line(row: ExportRow, lean: LeanCheck | None) -> bytes:
    return json_line(export_record(row, lean))


def _csv_line(row: ExportRow, lean: LeanCheck | None) -> bytes:
    return csv_row(EXPORT_COLUMNS, export_record(row, lean))
