"""Accepting a batch: read its items (a JSON object or JSONL), validate every one before
anything is stored, then store them all in the request's one transaction.

Two passes over the items, by design:

1. check (no database, in a thread): validate every item -- schema, then the same
   `check_request` as a single submission -- and run the evidence checks of items with
   supplied replies, the costly pure part. Of an item only its findings are kept.
2. store: validate again (cheap; the body cannot have changed) and insert chunk by chunk
   with bulk statements (store.py, the path a single screening takes too): pairs,
   screenings, reviews of supplied replies, review queue items, jobs.

So the items are held once -- as the request body (JSONL) or as the parsed JSON, whose
bytes are released once parsed (see batch_body.py) -- plus one chunk of rows; and on
SQLite the write lock is held only while rows are inserted, not while items are checked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.principal import Principal
from app.errors import AppError
from app.evidence import run_checks
from app.evidence.finding import Finding
from app.intake import admission
from app.intake.batch_body import BatchBody, BatchRejected, Items, RawItem, error_detail, read_items
from app.intake.idempotency import check_repeat, held_by
from app.intake.requests import ScreeningRequest
from app.intake.screenings import check_request
from app.intake.store import Submission, pair_of, store_chunk
from app.models.batch import Batch, new_batch_id
from app.repositories import batches
from app.settings import Settings
from app.vocabulary import Priority

__all__ = [
    "Accepted",
    "BatchBody",
    "BatchRejected",
    "check_items",
    "submit_batch",
]

# Items per round of bulk inserts (one executemany per table).
CHUNK_ITEMS = 500
# Errors listed in a 422; the rest are counted.
MAX_LISTED_ERRORS = 100


@dataclass(frozen=True, slots=True)
class Accepted:
    batch: Batch
    # False when an Idempotency-Key repeat found the batch stored earlier.
    created: bool
    # Jobs queued for the worker (items without supplied replies).
    queued: int = 0


# ---- Pass 1: check every item ---------------------------------------------------------------


@dataclass(slots=True)
class ItemErrors:
    details: list[dict[str, Any]] = field(default_factory=list)
    errors: int = 0
    items: int = 0

    def add(self, item: RawItem, found: Iterable[dict[str, Any]]) -> None:
        self.items += 1
        for detail in found:
            self.errors += 1
            if len(self.details) < MAX_LISTED_ERRORS:
                self.details.append({"index": item.index, "line": item.line, **detail})

    def rejection(self, total: int) -> BatchRejected:
        omitted = self.errors - len(self.details)
        message = f"{self.items} of {total} items are invalid; nothing was stored"
        if omitted:
            message += f" (the first {len(self.details)} errors are listed, {omitted} more not)"
        return BatchRejected(
            422, "invalid_items", message, self.details, invalid_items=self.items, omitted=omitted
        )


# Per item with supplied replies: its evidence findings. None for the others.
Findings = list[tuple[Finding, ...] | None]


def check_items(items: Items, settings: Settings) -> Findings:
    """Pass 1. Raises BatchRejected: 413 past the item limit, 422 for an empty batch or
    invalid items (every invalid item found, the first errors listed)."""
    limit = settings.max_batch_items
    known = items.known_count()
    if known is not None and known > limit:
        raise _too_many(limit, f"this one has {known}")
    errors = ItemErrors()
    findings: Findings = []
    for item in items:
        if item.index >= limit:
            raise _too_many(limit, "this one has more")
        request = _checked(item, settings, errors)
        # Once the batch is known to be refused, its findings would be thrown away.
        findings.append(_findings(request) if not errors.items else None)
    if not findings:
        raise BatchRejected(422, "empty_batch", "a batch needs at least one item")
    if errors.items:
        raise errors.rejection(len(findings))
    return findings


def _findings(request: ScreeningRequest | None) -> tuple[Finding, ...] | None:
    if request is None or request.replies is None:
        return None
    return tuple(run_checks(pair_of(request)))


def _too_many(limit: int, what: str) -> BatchRejected:
    return BatchRejected(
        413,
        "too_many_items",
        f"a batch holds at most {limit} items (FAITHSCREEN_MAX_BATCH_ITEMS); {what}",
        limit=limit,
    )


def _checked(item: RawItem, settings: Settings, errors: ItemErrors) -> ScreeningRequest | None:
    try:
        request = item.parse()
    except ValidationError as error:
        errors.add(item, (error_detail(item, e) for e in error.errors(include_input=False)))
        return None
    try:
        check_request(request, settings)
    except AppError as error:
        # Each refusal of `check_request` names its field: a statement, `replies`,
        # `replies.judges.<name>`, `options.confirmations`...
        found = {"field": error.field, "code": error.code, "message": error.message}
        errors.add(item, [found])
        return None
    return request


# ---- Pass 2: store --------------------------------------------------------------------------


async def submit_batch(
    session: AsyncSession,
    body: BatchBody,
    settings: Settings,
    *,
    principal: Principal,
    name: str | None = None,
    idempotency_key: str | None = None,
) -> Accepted:
    """Store the batch and queue (or decide) its items, or return the batch an earlier
    request of `principal`'s key with the same `idempotency_key` stored (409 if that
    request's body differed; another key's batch under the same key is never found).
    Its items are `principal`'s, at priority batch unless they ask otherwise (admission)."""
    if idempotency_key is not None:
        earlier = await batches.get_by_key(session, principal.name, idempotency_key)
        if earlier is not None:
            return _repeat(earlier, body)
    items = read_items(body)
    findings = await asyncio.to_thread(check_items, items, settings)
    await batches.lock_ingest(session)
    await admission.lock_caps(session, principal)
    batch_id = new_batch_id()
    stored = await batches.add(
        session,
        batch_id=batch_id,
        name=items.name or name,
        total=len(findings),
        scope=principal.name,
        idempotency_key=idempotency_key,
        body_sha256=body.sha256,
    )
    if not stored:
        # Only the key can clash (the id is new): another request with this key committed
        # while this one was checking its items.
        key = str(idempotency_key)
        find = partial(batches.get_by_key, session, principal.name, key)
        return _repeat(await held_by(find, key), body)
    queued = await _store_items(session, batch_id, items, findings, settings, principal)
    if queued:
        await admission.check_caps(session, principal, settings, queued)
    return Accepted(await _by_id(session, batch_id), created=True, queued=queued)


def _repeat(batch: Batch, body: BatchBody) -> Accepted:
    check_repeat("batch", batch.id, batch.body_sha256, body.sha256)
    return Accepted(batch, created=False)


async def _by_id(session: AsyncSession, batch_id: str) -> Batch:
    batch = await batches.get(session, batch_id)
    if batch is None:
        raise RuntimeError(f"batch {batch_id} is missing in the transaction that stored it")
    return batch


async def _store_items(
    session: AsyncSession,
    batch_id: str,
    items: Items,
    findings: Findings,
    settings: Settings,
    principal: Principal,
) -> int:
    queued = 0
    chunk: list[Submission] = []
    store = partial(store_chunk, session, batch_id, settings=settings, submitter=principal.name)
    for item in items:
        request = item.parse()
        priority = admission.priority_for(request, Priority.BATCH, principal)
        chunk.append(Submission(request, item.index, findings[item.index], priority))
        if len(chunk) == CHUNK_ITEMS:
            queued += (await store(chunk)).queued
            chunk = []
    if chunk:
        queued += (await store(chunk)).queued
    return queued
