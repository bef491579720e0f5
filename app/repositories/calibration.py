"""Rows for a batch's calibration (app/calibration/), streamed: a batch's labelled
screenings with their calls, and each labelled pair's outcome for comparisons.

One query per read, streamed in chunks of CHUNK rows: a calibration over a large batch
holds one chunk, never the batch.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Row, Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.models.lean_check import LeanCheck
from app.models.pair import PairRow
from app.models.rescore import ReadingRow
from app.models.review import Review
from app.models.screening import Screening
from app.vocabulary import ScreeningStatus

CHUNK = 1000
# A row of any columns, read by name.
AnyRow = Row[*tuple[Any, ...]]
DONE = ScreeningStatus.DONE


async def unlabelled_count(session: AsyncSession, batch_id: str) -> int:
    statement = select(func.count()).where(
        Screening.batch_id == batch_id, Screening.label.is_(None)
    )
    return int((await session.execute(statement)).scalar_one())


async def labelled_screenings(
    session: AsyncSession, batch_id: str, *extra: ColumnElement[Any]
) -> AsyncIterator[Sequence[AnyRow]]:
    """Each labelled screening of the batch as its rows, one per stored review (a single
    row with null review columns when it has none). Row fields: `id`, `label`, `status`,
    `outcome`, `reasons`, `tags`, `formal`, `confirmations`, `policy_version`,
    `evidence_version`, and the review's `role`, `model`, `prompt_version`,
    `parser_version`, `verdict` and `parse_status` (its current reading's), `judge_name`,
    `purpose`, `supplied`, `http_status`, `usage`, `latency_ms`, `evidential`, the
    screening's `lean_status` (null when no Lean check is stored), then the
    `extra` columns asked for (the format study's pair id and reply text)."""
    result = await session.stream(_labelled_statement(batch_id).add_columns(*extra))
    group: list[AnyRow] = []
    try:
        async for row in result:
            if group and group[0].id != row.id:
                yield group
                group = []
            group.append(row)
    finally:
        await result.close()
    if group:
        yield group


def _labelled_statement(batch_id: str) -> Select[*tuple[Any, ...]]:
    in_batch = select(Screening.id).where(Screening.batch_id == batch_id)
    latest = (
        select(ReadingRow.review_id, func.max(ReadingRow.id).label("reading_id"))
        .where(ReadingRow.screening_id.in_(in_batch))
        .group_by(ReadingRow.review_id)
        .subquery()
    )
    reread = aliased(ReadingRow)
    return (
        select(
            Screening.id,
            Screening.label,
            Screening.status,
            Screening.outcome,
            Screening.reasons,
            Screening.tags,
            PairRow.formal,
            Screening.confirmations,
            Screening.policy_version,
            Screening.evidence_version,
            Review.role,
            Review.model,
            Review.prompt_version,
            func.coalesce(reread.parser_version, Review.parser_version).label("parser_version"),
            func.coalesce(reread.verdict, Review.verdict).label("verdict"),
            func.coalesce(reread.parse_status, Review.parse_status).label("parse_status"),
            Review.judge_name,
            Review.purpose,
            Review.supplied,
            Review.http_status,
            Review.usage,
            Review.latency_ms,
            Review.evidential,
            LeanCheck.status.label("lean_status"),
        )
        .join(PairRow, PairRow.id == Screening.pair_id)
        # At most one check a screening (unique screening_id): rows stay one per review.
        .outerjoin(LeanCheck, LeanCheck.screening_id == Screening.id)
        .outerjoin(Review, Review.screening_id == Screening.id)
        .outerjoin(latest, latest.c.review_id == Review.id)
        .outerjoin(reread, reread.id == latest.c.reading_id)
        .where(Screening.batch_id == batch_id, Screening.label.is_not(None))
        .order_by(Screening.id, Review.id)
        .execution_options(yield_per=CHUNK)
    )


async def judged_pairs(session: AsyncSession, batch_id: str) -> AsyncIterator[AnyRow]:
    """The batch's done, labelled screenings in submission order: `pair_id`, `label`,
    `outcome`."""
    statement = (
        select(Screening.pair_id, Screening.label, Screening.outcome)
        .where(
            Screening.batch_id == batch_id,
            Screening.label.is_not(None),
            Screening.status == DONE,
        )
        .order_by(Screening.batch_index)
        .execution_options(yield_per=CHUNK)
    )
    result = await session.stream(statement)
    try:
        async for row in result:
            yield row
    finally:
        await result.close()


async def prompt_versions(session: AsyncSession, batch_id: str) -> list[str]:
    """The prompt versions the batch's done, labelled screenings were asked under (none
    for supplied replies), in order: what a comparison says each batch ran with."""
    statement = (
        select(Review.prompt_version)
        .distinct()
        .join(Screening, Screening.id == Review.screening_id)
        .where(
            Screening.batch_id == batch_id,
            Screening.label.is_not(None),
            Screening.status == DONE,
            Review.prompt_version.is_not(None),
        )
        .order_by(Review.prompt_version)
    )
    return [version for version in await session.scalars(statement) if version is not None]
