"""The queue page's filters, read from its GET form, and its paging links.

Read by hand rather than as FastAPI query parameters so that a bad value is a readable
page (422), not the API's JSON error.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from app.auth.principal import Principal
from app.errors import AppError
from app.intake.requests import refuse_unstorable
from app.models.api_key import AccessRole
from app.models.queue_item import STATUSES
from app.repositories.queue_search import MAX_TERM_CHARS
from app.review_queue.service import QueueFilters
from app.review_queue.visibility import BlindMode, audit_withheld, blind_audit_values
from app.vocabulary import QueueStatus
from app.web.pages import PageProblem

# The API's limits on the same filters (app/api/routes/queue.py).
MAX_LENGTHS = {"reason": 200, "batch_id": 36, "cursor": 200, "q": MAX_TERM_CHARS}
MINE_VALUES = {"": False, "true": True}
AUDIT_VALUES = {"": None, "true": True, "false": False}


def _refuse(message: str) -> PageProblem:
    return PageProblem(AppError(422, "validation_error", message), back_url="/review")


def _text(query: Mapping[str, str], name: str) -> str | None:
    value = query.get(name, "").strip()
    if len(value) > MAX_LENGTHS[name]:
        raise _refuse(f"{name}: at most {MAX_LENGTHS[name]} characters")
    try:
        return refuse_unstorable(value) or None
    except ValueError as error:
        raise _refuse(f"{name}: {error}") from error


def _status(query: Mapping[str, str]) -> QueueStatus | None:
    value = query.get("status", "")
    try:
        return QueueStatus(value) if value else None
    except ValueError as error:
        raise _refuse(f"status: one of {', '.join(STATUSES)}") from error


def _audit(query: Mapping[str, str]) -> bool | None:
    value = query.get("audit", "")
    if value not in AUDIT_VALUES:
        raise _refuse("audit: true or false")
    return AUDIT_VALUES[value]


def _mine(query: Mapping[str, str]) -> bool:
    value = query.get("mine", "")
    if value not in MINE_VALUES:
        raise _refuse("mine: true, or left out")
    return MINE_VALUES[value]


def filters_from(
    query: Mapping[str, str], principal: Principal, mode: BlindMode
) -> tuple[QueueFilters, str | None]:
    """The filters and the page cursor of a queue page's address. As in GET /v1/queue, a
    filter on what a blind item withholds (its reasons; its audit flag under `all`) never
    matches that item for a non-admin: else the filter would tell what the item hides."""
    admin = principal.role is AccessRole.ADMIN
    filters = QueueFilters(
        status=_status(query),
        reason=_text(query, "reason"),
        batch_id=_text(query, "batch_id"),
        audit=_audit(query),
        blind_audits=() if admin else blind_audit_values(mode),
        audit_withheld=audit_withheld(mode),
        text=_text(query, "q"),
        assigned_to=principal.name if _mine(query) else None,
    )
    return filters, _text(query, "cursor")


def _address(filters: QueueFilters, cursor: str | None) -> str:
    pairs = {
        "status": filters.status.value if filters.status else None,
        "reason": filters.reason,
        "batch_id": filters.batch_id,
        "audit": None if filters.audit is None else str(filters.audit).lower(),
        "q": filters.text,
        "mine": "true" if filters.assigned_to is not None else None,
        "cursor": cursor,
    }
    query = urlencode({name: value for name, value in pairs.items() if value is not None})
    return "/review" + (f"?{query}" if query else "")


def page_links(
    filters: QueueFilters, cursor: str | None, next_cursor: str | None
) -> tuple[str | None, str | None]:
    """The first page's address (when not on it) and the next page's (when there is one)."""
    first = _address(filters, None) if cursor else None
    return first, _address(filters, next_cursor) if next_cursor else None
