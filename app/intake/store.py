"""Storing checked screening requests: the one write path of intake, for a single screening
(a chunk of one) and for a batch, chunk by chunk.

A chunk is one round of bulk statements, one a table: pairs, screenings, the reviews of
supplied replies, the review queue items their outcomes call for, and the jobs of the
others. Supplied replies are decided here, so their screenings are stored done, and their
queue items are added in the same transaction: no outcome that needs a person is ever
committed without its item.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncSession

from app.evidence import run_checks
from app.evidence.finding import Finding
from app.intake.requests import ScreeningRequest
from app.intake.supplied import decide_supplied, request_panel
from app.models.screening import new_screening_id
from app.repositories import jobs, pairs, reviews, screenings
from app.repositories.reviews import ReviewRecord
from app.repositories.screenings import NewScreening
from app.review_queue.enqueue import queue_many
from app.settings import Settings
from app.vocabulary import Pair, Priority


@dataclass(frozen=True, slots=True)
class Submission:
    """One request that passed `check_request`: a single screening, or a batch's item at
    `batch_index`."""

    request: ScreeningRequest
    batch_index: int | None = None
    # The pair's evidence findings, when replies are supplied and the caller ran the checks
    # already (a batch does, in its checking pass off the event loop); None: run here.
    findings: tuple[Finding, ...] | None = None
    # The priority it is screened at (admission.priority_for decided it).
    priority: Priority = Priority.INTERACTIVE
    # Its screening's id, chosen before anything is stored (an Idempotency-Key names it).
    screening_id: str = field(default_factory=new_screening_id)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    # In the order of the submissions.
    screening_ids: list[str]
    # Jobs queued for the worker (those without supplied replies).
    queued: int


def pair_of(request: ScreeningRequest) -> Pair:
    return Pair(request.informal, request.formal, request.header)


async def store_chunk(
    session: AsyncSession,
    batch_id: str | None,
    chunk: Sequence[Submission],
    settings: Settings,
    *,
    submitter: str,
) -> StoredChunk:
    """One round of bulk inserts in the caller's transaction (`batch_id`: None for a single
    screening); the jobs take `submitter`'s next turns (the key's name)."""
    pair_ids = await pairs.get_or_create_many(session, [pair_of(s.request) for s in chunk])
    new: list[NewScreening] = []
    records: list[ReviewRecord] = []
    queued: dict[Priority, list[str]] = defaultdict(list)
    for submission, pair_id in zip(chunk, pair_ids, strict=True):
        screening, supplied = _screening(submission, pair_id, batch_id, settings)
        new.append(screening)
        records.extend(supplied)
        if screening.outcome is None:
            queued[submission.priority].append(screening.id)
    await screenings.add_many(session, new)
    await reviews.add_many(session, records)
    await queue_many(
        session, new, audit_rate=settings.audit_rate, double_rate=settings.review_double_rate
    )
    for priority, screening_ids in queued.items():
        await jobs.enqueue_many(session, screening_ids, priority=priority, submitter=submitter)
    return StoredChunk([s.id for s in new], sum(len(ids) for ids in queued.values()))


def _screening(
    submission: Submission, pair_id: int, batch_id: str | None, settings: Settings
) -> tuple[NewScreening, list[ReviewRecord]]:
    """The new screening's row, and the reviews of its supplied replies: with replies it
    is decided at once (no confirmations: none would be asked of a provider), unless a
    Lean server must check it first (FAITHSCREEN_LEAN_SERVER_URL): then it is queued."""
    request = submission.request
    panel = request_panel(request, settings)
    screening = NewScreening(
        id=submission.screening_id,
        pair_id=pair_id,
        external_id=request.external_id,
        batch_id=batch_id,
        batch_index=submission.batch_index,
        confirmations=_confirmations(request, settings),
        label=request.label,
        tags=request.tags,
        judges=None if panel is None else panel.judges,
        panel_rule=None if panel is None else panel.rule,
        priority=submission.priority,
    )
    if request.replies is None:
        return screening, []
    findings = submission.findings
    if findings is None:
        findings = tuple(run_checks(pair_of(request)))
    ruling, records = decide_supplied(screening.id, request.replies, findings, panel)
    if settings.lean.server_url:
        # Lean is asked first (docs/lean.md), the replies too: they are stored now and the
        # screening is queued; the worker rules them once Lean's check is stored.
        return dataclasses.replace(screening, confirmations=0), records
    decided = dataclasses.replace(screening, confirmations=0, **ruling.outcome_fields())
    return decided, records


def _confirmations(request: ScreeningRequest, settings: Settings) -> int:
    chosen = request.options.confirmations
    return settings.confirmations if chosen is None else chosen
