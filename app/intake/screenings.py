"""Accepting one screening: the checks every request passes (a batch's items too), then
storing it as a chunk of one (store.py), under its Idempotency-Key when it has one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.principal import Principal
from app.clock import utcnow
from app.errors import AppError, PayloadTooLarge, ProviderNotConfigured
from app.intake import admission
from app.intake.idempotency import Keyed, check_repeat, held_by
from app.intake.requests import ScreeningRequest
from app.intake.store import Submission, store_chunk
from app.intake.supplied import check_judges, check_reply_sizes
from app.models.screening import Screening
from app.models.screening_key import ScreeningKey
from app.repositories import screening_keys, screenings
from app.settings import Settings
from app.vocabulary import Priority


def check_request(request: ScreeningRequest, settings: Settings) -> None:
    """Reject what cannot be screened, before anything is stored."""
    _check_sizes(request, settings)
    check_judges(request, settings)
    if request.replies is None:
        missing = settings.missing_providers()
        if missing:
            raise ProviderNotConfigured(missing)
    elif request.options.confirmations:
        raise AppError(
            422,
            "confirmations_need_provider",
            "options.confirmations must be 0 when 'replies' are supplied: "
            "a confirmation re-asks a provider, and none is called for supplied replies",
            field="options.confirmations",
        )


def _check_sizes(request: ScreeningRequest, settings: Settings) -> None:
    """413 for a statement past FAITHSCREEN_MAX_STATEMENT_BYTES or a supplied reply past
    FAITHSCREEN_MAX_REPLY_BYTES, both counted in UTF-8 bytes."""
    limit = settings.max_statement_bytes
    for field in ("informal", "formal", "header"):
        if len(getattr(request, field).encode("utf-8")) > limit:
            raise PayloadTooLarge(field, limit)
    if request.replies is not None:
        check_reply_sizes(request.replies, settings.max_reply_bytes)


# Keys past their window removed by each keyed submission.
EXPIRED_PER_SUBMISSION = 10


@dataclass(frozen=True, slots=True)
class Submitted:
    screening: Screening
    # False when an Idempotency-Key repeat found the screening stored earlier.
    created: bool


async def submit(
    session: AsyncSession,
    request: ScreeningRequest,
    settings: Settings,
    *,
    principal: Principal,
    keyed: Keyed | None = None,
) -> Submitted:
    """Store the screening, as a chunk of one on the path a batch takes: supplied replies are
    decided at once (queued for the Lean check first when a Lean server is set), others
    are queued. With `keyed`, a repeat within
    FAITHSCREEN_SCREENING_IDEMPOTENCY_SECONDS gets the screening stored first (409 if its
    body differed); keys are `principal`'s own, another key's same key is another."""
    if keyed is not None:
        since = utcnow() - timedelta(seconds=settings.screening_idempotency_seconds)
        find = partial(screening_keys.find, session, principal.name, keyed.key, since=since)
        if earlier := await find():
            return await _repeat(session, earlier, keyed)
    check_request(request, settings)
    submission = Submission(
        request, priority=admission.priority_for(request, Priority.INTERACTIVE, principal)
    )
    await admission.lock_caps(session, principal)
    if keyed is not None:
        if not await _take(session, principal, keyed, submission.screening_id, since):
            return await _repeat(session, await held_by(find, keyed.key), keyed)
        # More than the one key this adds: the table stays the size of one window.
        await screening_keys.remove_expired(session, since=since, limit=EXPIRED_PER_SUBMISSION)
    stored = await store_chunk(session, None, [submission], settings, submitter=principal.name)
    if stored.queued:
        await admission.check_caps(session, principal, settings, stored.queued)
    return Submitted(await _stored(session, stored.screening_ids[0]), created=True)


async def _take(
    session: AsyncSession, principal: Principal, keyed: Keyed, screening_id: str, since: datetime
) -> bool:
    return await screening_keys.take(
        session, principal.name, keyed.key, screening_id, keyed.body_sha256, since=since
    )


async def _repeat(session: AsyncSession, earlier: ScreeningKey, keyed: Keyed) -> Submitted:
    check_repeat("screening", earlier.screening_id, earlier.body_sha256, keyed.body_sha256)
    return Submitted(await _stored(session, earlier.screening_id), created=False)


async def _stored(session: AsyncSession, screening_id: str) -> Screening:
    screening = await screenings.get(session, screening_id)
    if screening is None:
        raise RuntimeError(f"screening {screening_id} is missing, yet a key or a chunk names it")
    return screening
