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


async def check_caps(
    session: AsyncSession, principal: Principal, settings: Settings, queued: int
) -> None:
    """After storing `queued` jobs, in the same transaction (which a refusal rolls back):
    429 when the key's outstanding screenings, these included, pass a cap.

    Cheap at any queue size: the span of the key's turns bounds its live jobs (four index
    lookups), and only a key whose span passes a cap is counted, the count stopping at the
    cap plus this request's jobs plus one. That count is exact whenever the key was within
    the cap before (the lock above makes that so, unless a cap was lowered: then the
    answer says "at least")."""
    caps = (
        (settings.key_max_outstanding, None, "key_outstanding_cap", ""),
        (
            settings.key_max_outstanding_interactive,
            Priority.INTERACTIVE,
            "key_interactive_cap",
            "_INTERACTIVE",
        ),
    )
    for cap, priority, code, suffix in caps:
        if not cap or await jobs.outstanding_at_most(session, principal.name, priority) <= cap:
            continue
        limit = cap + queued + 1
        count = await jobs.outstanding_up_to(session, principal.name, limit, priority)
        if count > cap:
            raise _over_cap(principal, code, cap, count, suffix, at_least=count == limit)


def _over_cap(
    principal: Principal, code: str, cap: int, count: int, suffix: str, *, at_least: bool
) -> AppError:
    kind = "interactive " if suffix else ""
    made = f"at least {count}" if at_least else str(count)
    return AppError(
        429,
        code,
        f"key '{principal.name}' may have at most {cap} {kind}screenings queued or running "
        f"(FAITHSCREEN_KEY_MAX_OUTSTANDING{suffix}); this request would make {made}. "
        "Nothing was stored: retry once some have finished",
        extra={"cap": cap, "outstanding": count},
        headers={"Retry-After": str(CAP_RETRY_AFTER_SECONDS)},
    )
