"""The calibration of a batch, and the comparison of two, read from a database session
(the API and the CLI both use these), and finding a batch by its id or its name.

The calibration functions take ids only: callers resolve a name with `find_batch` first,
so that every check on the batch (the API's blind-review refusal) sees the real id."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio.to_thread
from sqlalchemy.ext.asyncio import AsyncSession

from app.calibration.compare import Comparison, Judged, compare
from app.calibration.kind import statement_kind
from app.calibration.tally import CalibrationTally, Call, LabelledScreening
from app.errors import AppError, NotFound
from app.models.batch import Batch
from app.repositories import batches, calibration
from app.repositories.calibration import AnyRow
from app.vocabulary import LEAN_NOT_CHECKED, ScreeningStatus

DONE = ScreeningStatus.DONE


async def batch_calibration(session: AsyncSession, batch_id: str) -> dict[str, Any]:
    """The calibration object of GET /v1/batches/{id}/calibration. Raises NotFound."""
    await _require_batch(session, batch_id)
    tally = CalibrationTally(unlabelled=await calibration.unlabelled_count(session, batch_id))
    async for rows in calibration.labelled_screenings(session, batch_id):
        tally.add(labelled_screening(rows))
    return {"batch_id": batch_id, **tally.as_json()}


def labelled_screening(rows: Sequence[AnyRow]) -> LabelledScreening:
    """One screening's rows (repositories.calibration.labelled_screenings) as a value."""
    first = rows[0]
    return LabelledScreening(
        label=first.label,
        outcome=first.outcome if first.status == DONE else None,
        reasons=tuple(first.reasons or ()),
        tags=tuple(first.tags or ()),
        kind=statement_kind(first.formal),
        confirmations=first.confirmations,
        policy_version=first.policy_version,
        evidence_version=first.evidence_version,
        calls=tuple(_call(row) for row in rows if row.role is not None),
        lean_status=LEAN_NOT_CHECKED if first.lean_status is None else str(first.lean_status),
    )


def _call(row: AnyRow) -> Call:
    usage = row.usage or {}
    return Call(
        role=row.role,
        model=row.model,
        prompt_version=row.prompt_version,
        parser_version=row.parser_version,
        supplied=bool(row.supplied),
        http_status=row.http_status,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        latency_ms=row.latency_ms,
        judge_name=row.judge_name or "",
        purpose=row.purpose,
        verdict=row.verdict,
        parse_status=row.parse_status,
        evidential=bool(row.evidential),
    )


async def compare_batches(session: AsyncSession, a: str, b: str) -> dict[str, Any]:
    """The comparison of GET /v1/calibrations/compare. Raises NotFound for an unknown
    batch and 409 `no_common_pairs` when no pair is labelled alike and done in both."""
    judged = [await _judged(session, batch_id) for batch_id in (a, b)]
    # In a worker thread: tens of thousands of pairs take a while, and the event loop
    # serves every other request (a reviewer key can call this) meanwhile.
    comparison: Comparison = await anyio.to_thread.run_sync(compare, judged[0], judged[1])
    if comparison.common == 0:
        raise AppError(
            409,
            "no_common_pairs",
            f"batches {a} and {b} have no pair in common that is labelled alike and done "
            f"in both ({comparison.label_conflicts} labelled differently); compare batches "
            "that screened the same labelled pairs",
        )
    versions = {side: await calibration.prompt_versions(session, side) for side in (a, b)}
    return {"a": a, "b": b, **comparison.as_json(), "prompt_versions": versions}


async def _judged(session: AsyncSession, batch_id: str) -> dict[object, Judged]:
    """Each pair's first done, labelled screening of the batch (a pair submitted twice in
    one batch counts once)."""
    await _require_batch(session, batch_id)
    judged: dict[object, Judged] = {}
    async for row in calibration.judged_pairs(session, batch_id):
        judged.setdefault(row.pair_id, Judged(row.label, row.outcome))
    return judged


# Ids listed when a name is ambiguous; more would not help anyone choose.
LISTED_NAMESAKES = 10


async def find_batch(session: AsyncSession, batch: str) -> Batch:
    """The batch whose id is `batch`, else the one named `batch` (an id wins: a name can
    be anything, an id is what the API hands out). Raises NotFound when neither matches
    and 409 `ambiguous_batch_name` when several batches share the name, listing their ids,
    since guessing one would calibrate the wrong run without a word."""
    found = await batches.get(session, batch)
    if found is not None:
        return found
    ids = await batches.ids_named(session, batch, LISTED_NAMESAKES + 1)
    if not ids:
        raise NotFound("batch", batch)
    if len(ids) > 1:
        more = ", …" if len(ids) > LISTED_NAMESAKES else ""
        raise AppError(
            409,
            "ambiguous_batch_name",
            f"several batches are named {batch!r}: {', '.join(ids[:LISTED_NAMESAKES])}{more}; "
            "give one of their ids",
        )
    named = await batches.get(session, ids[0])
    if named is None:  # deleted between the two reads
        raise NotFound("batch", batch)
    return named


async def _require_batch(session: AsyncSession, batch_id: str) -> None:
    if await batches.get(session, batch_id) is None:
        raise NotFound("batch", batch_id)
