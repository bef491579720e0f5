"""Accepting one screening: validate, dedupe and store the pair, then queue or decide it."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import AppError, PayloadTooLarge, ProviderNotConfigured
from app.evidence import run_checks
from app.intake.requests import ScreeningRequest, SuppliedReplies
from app.intake.supplied import check_judges, check_reply_sizes, decide_supplied, request_panel
from app.models.screening import Screening
from app.policy import Panel
from app.repositories import jobs, pairs, reviews, screenings
from app.review_queue.enqueue import queue_for_review
from app.settings import Settings
from app.vocabulary import Pair


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


async def submit(
    session: AsyncSession,
    request: ScreeningRequest,
    settings: Settings,
    *,
    batch_id: str | None = None,
) -> Screening:
    """Store the screening; supplied replies are decided at once, others are queued."""
    check_request(request, settings)
    pair = Pair(request.informal, request.formal, request.header)
    pair_row = await pairs.get_or_create(session, pair)
    supplied = request.replies is not None
    confirmations = 0 if supplied else _confirmations(request, settings)
    panel = request_panel(request, settings)
    screening = await screenings.add(
        session,
        pair_id=pair_row.id,
        external_id=request.external_id,
        batch_id=batch_id,
        confirmations=confirmations,
        label=request.label,
        tags=request.tags,
        judges=None if panel is None else panel.judges,
        panel_rule=None if panel is None else panel.rule.value,
    )
    if request.replies is None:
        await jobs.enqueue(session, screening.id)
    else:
        replies = request.replies
        await _decide_supplied(session, screening.id, pair, replies, panel, settings)
    return screening


def _confirmations(request: ScreeningRequest, settings: Settings) -> int:
    chosen = request.options.confirmations
    return settings.confirmations if chosen is None else chosen


async def _decide_supplied(
    session: AsyncSession,
    screening_id: str,
    pair: Pair,
    replies: SuppliedReplies,
    panel: Panel | None,
    settings: Settings,
) -> None:
    findings = tuple(run_checks(pair))
    decided, records = decide_supplied(screening_id, replies, findings, panel)
    for record in records:
        await reviews.add(session, record)
    await screenings.record_outcome(
        session,
        screening_id,
        outcome=decided.ruling.outcome.value,
        reasons=list(decided.ruling.reasons),
        evidence=decided.evidence_json(),
        policy_version=decided.ruling.policy_version,
        evidence_version=decided.evidence_version,
    )
    # The review queue item, in the outcome's transaction (issue 5).
    outcome, reasons = decided.ruling.outcome.value, decided.ruling.reasons
    await queue_for_review(
        session,
        screening_id,
        outcome,
        reasons,
        audit_rate=settings.audit_rate,
        double_rate=settings.review_double_rate,
    )
