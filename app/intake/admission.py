"""What a key may ask of the queue: the priority a request is screened at, and the caps on
the screenings a key may have outstanding (queued or running).

Priority: a single screening (an MCP call is one) is `interactive`, a batch's item `batch`,
unless the request's `options.priority` says otherwise. Any key may lower its request to
`batch`; only an admin key may raise a batch's items to `interactive`, which would put
them ahead of every other key's batches. Caps are counted in the database, so they hold
for every API process together (docs/api.md, "Priorities and caps").
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.principal import Principal
from app.errors import AppError
from app.intake.requests import ScreeningRequest
from app.models.api_key import AccessRole
from app.repositories import jobs
from app.settings import Settings
from app.vocabulary import Priority

# A cap clears as the key's screenings finish; a client waits this long before retrying.
CAP_RETRY_AFTER_SECONDS = 30


def priority_for(request: ScreeningRequest, default: Priority, principal: Principal) -> Priority:
    """The request's `options.priority`, else `default`; 403 `priority_not_allowed` when a
    key below admin asks to raise a batch's items to interactive."""
    chosen = request.options.priority
    if chosen is None:
        return default
    priority = Priority(chosen)
    raised = priority is Priority.INTERACTIVE and default is Priority.BATCH
    if raised and not principal.allows(AccessRole.ADMIN):
        raise AppError(
            403,
            "priority_not_allowed",
            "only an admin key may screen a batch's items at priority 'interactive' "
            "(ahead of every other key's batches); leave options.priority out",
            field="options.priority",
        )
    return priority


async def lock_caps(session: AsyncSession, principal: Principal) -> None:
    """Before storing: hold the key's intake lock, so `check_caps` afterwards is exact."""
    await jobs.lock_submitter(session, principal.name)


async def check_caps(session: AsyncSession, principal: Principal, settings: Settings) -> None:
    """After storing, in the same transaction (which a refusal rolls back): 429 when the
    key's outstanding screenings, these included, pass a cap."""
    counts = await jobs.outstanding(session, principal.name)
    caps = (
        (sum(counts.values()), settings.key_max_outstanding, "key_outstanding_cap", ""),
        (
            counts[Priority.INTERACTIVE],
            settings.key_max_outstanding_interactive,
            "key_interactive_cap",
            "_INTERACTIVE",
        ),
    )
    for count, cap, code, suffix in caps:
        if cap and count > cap:
            raise _over_cap(principal, code, cap, count, suffix)


def _over_cap(principal: Principal, code: str, cap: int, count: int, suffix: str) -> AppError:
    kind = "interactive " if suffix else ""
    return AppError(
        429,
        code,
        f"key '{principal.name}' may have at most {cap} {kind}screenings queued or running "
        f"(FAITHSCREEN_KEY_MAX_OUTSTANDING{suffix}); this request would make {count}. "
        "Nothing was stored: retry once some have finished",
        extra={"cap": cap, "outstanding": count},
        headers={"Retry-After": str(CAP_RETRY_AFTER_SECONDS)},
    )
