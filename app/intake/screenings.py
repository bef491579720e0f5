"""Accepting one screening: the checks every request passes (a batch's items too), then
storing it as a chunk of one (store.py)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import AppError, PayloadTooLarge, ProviderNotConfigured
from app.intake.requests import ScreeningRequest
from app.intake.store import Submission, store_chunk
from app.intake.supplied import check_judges, check_reply_sizes
from app.models.screening import Screening
from app.repositories import screenings
from app.settings import Settings


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


async def submit(session: AsyncSession, request: ScreeningRequest, settings: Settings) -> Screening:
    """Store the screening, as a chunk of one on the path a batch takes: supplied replies are
    decided at once, others are queued. Returns the stored row."""
    check_request(request, settings)
    stored = await store_chunk(session, None, [Submission(request)], settings)
    screening = await screenings.get(session, stored.screening_ids[0])
    if screening is None:
        raise RuntimeError("a screening is missing in the transaction that stored it")
    return screening
