"""Re-scoring's reads and writes: finished screenings in id order, their stored calls with
each one's current reading, and the rows an applied run adds (see app/models/rescore.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from sqlalchemy import ColumnElement, Table, insert, select, update
from sqlalchemy.engine import CursorResult, Row
from sqlalchemy.ext.asyncio import AsyncSession

from app.clock import utcnow
from app.contract.reading import Reading
from app.models.pair import PairRow
from app.models.queue_item import QueueItem, QueueItemScreening
from app.models.rescore import ReadingRow, Rescore, RulingRow
from app.models.review import Review
from app.models.screening import Screening
from app.policy import Panel, panel_of
from app.repositories.reports import as_utc
from app.repositories.rescore_rows import ChangeToApply, CurrentState, StoredCall
from app.vocabulary import Pair, ParseStatus, QueueStatus, ScreeningStatus, Verdict

# A change of the caller's own type (rescore.diff.Change): the ones written are given back.
C = TypeVar("C", bound=ChangeToApply)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """Which finished screenings a run covers: one batch, those created since a moment
    (inclusive), or all of them."""

    batch_id: str | None = None
    since: datetime | None = None

    def conditions(self) -> list[ColumnElement[bool]]:
        conditions: list[ColumnElement[bool]] = [
            Screening.status == ScreeningStatus.DONE,
            Screening.outcome.is_not(None),
        ]
        if self.batch_id is not None:
            conditions.append(Screening.batch_id == self.batch_id)
        if self.since is not None:
            conditions.append(Screening.created_at >= as_utc(self.since))
        return conditions

    def as_json(self) -> dict[str, Any]:
        if self.batch_id is not None:
            return {"batch_id": self.batch_id}
        if self.since is not None:
            return {"since": as_utc(self.since).isoformat()}
        return {"all": True}


@dataclass(frozen=True, slots=True)
class StoredScreening:
    current: CurrentState
    pair: Pair
    confirmations: int
    # The panel it was screened by; None for the single judge.
    panel: Panel | None = None


async def screenings_after(
    session: AsyncSession, scope: Scope, after_id: str | None, limit: int
) -> list[StoredScreening]:
    """Up to `limit` finished screenings in scope with ids above `after_id`, in id order."""
    statement = (
        select(Screening, PairRow.informal, PairRow.formal, PairRow.header)
        .join(PairRow, PairRow.id == Screening.pair_id)
        .where(*scope.conditions())
        .order_by(Screening.id)
        .limit(limit)
    )
    if after_id is not None:
        statement = statement.where(Screening.id > after_id)
    rows = (await session.execute(statement)).all()
    return [
        StoredScreening(
            _current(screening),
            Pair(informal, formal, header),
            screening.confirmations,
            panel_of(screening.judges, screening.panel_rule),
        )
        for screening, informal, formal, header in rows
    ]


def _current(screening: Screening) -> CurrentState:
    return CurrentState(
        screening_id=screening.id,
        outcome=cast(str, screening.outcome),
        reasons=tuple(screening.reasons or ()),
        evidence=tuple(screening.evidence or ()),
        policy_version=screening.policy_version,
        evidence_version=screening.evidence_version,
        updated_at=screening.updated_at,
        label=screening.label,
    )


# What a replay reads of each review, in the order `_stored_call` unpacks it.
_CALL_COLUMNS = (
    Review.id,
    Review.screening_id,
    Review.role,
    Review.attempt,
    Review.purpose,
    Review.raw_response,
    Review.finish_reason,
    Review.verdict,
    Review.parse_status,
    Review.back_translation,
    Review.issues,
    Review.parser_version,
    Review.supplied,
    Review.judge_name,
    # The flag the call was made under: a replay never reads today's setting.
    Review.evidential,
    # The format it was asked in: a replay reads it with that format's reader. The body
    # too, whose tool calls every reader reads (contract-4 finds a text reply holding one
    # `invalid`). Not filtered in SQL: a JSON key may be spelt with escapes.
    Review.reply_format,
    Review.raw_body,
)


async def stored_calls(
    session: AsyncSession, screening_ids: Sequence[str]
) -> dict[str, list[StoredCall]]:
    """Each screening's stored calls, each with its current reading: the latest re-reading
    if a run applied one, else what was read when the reply came in."""
    latest = await _latest_readings(session, screening_ids)
    statement = (
        select(*_CALL_COLUMNS).where(Review.screening_id.in_(screening_ids)).order_by(Review.id)
    )
    calls: dict[str, list[StoredCall]] = defaultdict(list)
    for row in await session.execute(statement):
        calls[row[1]].append(_stored_call(row, latest))
    return calls


def _stored_call(row: Sequence[Any], latest: dict[int, Reading]) -> StoredCall:
    review_id, _, role, attempt, purpose, raw, finish = row[:7]
    verdict, status, back_translation, issues, version = row[7:12]
    supplied, judge_name, evidential, reply_format, raw_body = row[12:]
    reading = latest.get(review_id) or _reading(verdict, status, back_translation, issues, version)
    return StoredCall(
        review_id,
        role,
        attempt,
        purpose,
        raw,
        finish,
        reading,
        supplied,
        judge_name,
        evidential,
        reply_format=reply_format,
        raw_body=raw_body,
    )


async def _latest_readings(
    session: AsyncSession, screening_ids: Sequence[str]
) -> dict[int, Reading]:
    statement = (
        select(
            ReadingRow.review_id,
            ReadingRow.verdict,
            ReadingRow.parse_status,
            ReadingRow.back_translation,
            ReadingRow.issues,
            ReadingRow.parser_version,
        )
        .where(ReadingRow.screening_id.in_(screening_ids))
        .order_by(ReadingRow.id)
    )
    # In id order, so a later reading of the same review replaces an earlier one.
    return {
        review_id: _reading(verdict, status, back_translation, issues, version)
        for review_id, verdict, status, back_translation, issues, version in await session.execute(
            statement
        )
    }


def _reading(
    verdict: Verdict,
    status: ParseStatus,
    back_translation: str | None,
    issues: str | None,
    version: str,
) -> Reading:
    return Reading(verdict, status, back_translation, issues, version)


async def refresh_queue_reasons(
    session: AsyncSession, screening_id: str, reasons: list[str]
) -> None:
    """An item still waiting for a person takes the screening's new reasons (a resolved
    one keeps those it was decided with). An item answers for every screening of its pair
    that joined it (found through `queue_item_screenings`): it then shows the current
    reasons of all of them, the re-scored one's (`reasons`) in place of what it had."""
    item_id = (
        await session.execute(
            select(QueueItem.id)
            .join(QueueItemScreening, QueueItemScreening.queue_item_id == QueueItem.id)
            .where(
                QueueItemScreening.screening_id == screening_id,
                QueueItem.status != QueueStatus.RESOLVED,
            )
        )
    ).scalar_one_or_none()
    if item_id is None:
        return
    others = await session.execute(
        select(Screening.reasons)
        .join(QueueItemScreening, QueueItemScreening.screening_id == Screening.id)
        .where(QueueItemScreening.queue_item_id == item_id, Screening.id != screening_id)
        .order_by(QueueItemScreening.id)
    )
    joined = [reason for (row,) in others for reason in row or ()]
    await session.execute(
        update(QueueItem)
        .where(QueueItem.id == item_id)
        .values(reasons=list(dict.fromkeys([*reasons, *joined])), updated_at=utcnow())
    )


async def begin(
    session: AsyncSession, rescore_id: str, *, actor: str, scope: Scope, versions: dict[str, str]
) -> None:
    session.add(
        Rescore(
            id=rescore_id,
            actor=actor,
            scope=scope.as_json(),
            parser_version=versions["parser"],
            policy_version=versions["policy"],
            evidence_version=versions["evidence"],
            summary={"state": "running"},
        )
    )
    await session.flush()


async def finish(session: AsyncSession, rescore_id: str, summary: dict[str, Any]) -> None:
    await session.execute(update(Rescore).where(Rescore.id == rescore_id).values(summary=summary))


async def apply_changes(session: AsyncSession, rescore_id: str, changes: Sequence[C]) -> list[C]:
    """Write each change: the screening's new current outcome (only if the row is as it was
    read), its previous ruling kept in `rulings` the first time one is replaced, the new
    ruling, and the readings that differ. Returns the changes written; the others were
    changed by someone else meanwhile."""
    written = [change for change in changes if await _update_screening(session, change)]
    if not written:
        return []
    ids = [change.current.screening_id for change in written]
    kept = set(
        await session.scalars(select(RulingRow.screening_id).where(RulingRow.screening_id.in_(ids)))
    )
    rulings = [_previous_ruling(c) for c in written if c.current.screening_id not in kept]
    rulings += [_new_ruling(c, rescore_id) for c in written]
    await session.execute(insert(cast(Table, RulingRow.__table__)), rulings)
    readings = [
        _reading_row(change, review_id, reading, rescore_id)
        for change in written
        for review_id, (_, reading) in sorted(change.readings.items())
    ]
    if readings:
        await session.execute(insert(cast(Table, ReadingRow.__table__)), readings)
    return written


async def _update_screening(session: AsyncSession, change: ChangeToApply) -> bool:
    current, ruling = change.current, change.ruling
    statement = (
        update(Screening)
        .where(Screening.id == current.screening_id, Screening.updated_at == current.updated_at)
        .values(**ruling.outcome_fields(), updated_at=utcnow())
    )
    result = cast(CursorResult[Any], await session.execute(statement))
    return result.rowcount == 1


def _previous_ruling(change: ChangeToApply) -> dict[str, Any]:
    current = change.current
    return {
        "screening_id": current.screening_id,
        "rescore_id": None,
        "outcome": current.outcome,
        "reasons": list(current.reasons),
        "evidence": [dict(finding) for finding in current.evidence],
        "parser_version": change.parser_version_before,
        "policy_version": current.policy_version or "",
        "evidence_version": current.evidence_version or "",
        "created_at": utcnow(),
    }


def _new_ruling(change: ChangeToApply, rescore_id: str) -> dict[str, Any]:
    ruling = change.ruling
    return {
        "screening_id": change.current.screening_id,
        "rescore_id": rescore_id,
        **ruling.outcome_fields(),
        "parser_version": change.parser_version,
        "created_at": utcnow(),
    }


def _reading_row(
    change: ChangeToApply, review_id: int, reading: Reading, rescore_id: str
) -> dict[str, Any]:
    return {
        "review_id": review_id,
        "screening_id": change.current.screening_id,
        "rescore_id": rescore_id,
        "verdict": reading.verdict,
        "parse_status": reading.parse_status,
        "back_translation": reading.back_translation,
        "issues": reading.issues,
        "parser_version": reading.parser_version,
        "created_at": utcnow(),
    }


# ---- History, for a screening's detail ----------------------------------------------------


async def history(
    session: AsyncSession, screening_id: str
) -> tuple[list[RulingRow], list[Row[Any]]]:
    """The screening's rulings and re-readings, oldest first (both empty until a run
    applied a change to it). Each re-reading is a `readings` row's fields with the role
    and attempt of the review it re-read (the fields of api.schemas.ReadingOut)."""
    rulings = await session.scalars(
        select(RulingRow).where(RulingRow.screening_id == screening_id).order_by(RulingRow.id)
    )
    statement = (
        select(
            Review.role,
            Review.judge_name,
            Review.attempt,
            ReadingRow.verdict,
            ReadingRow.parse_status,
            ReadingRow.back_translation,
            ReadingRow.issues,
            ReadingRow.parser_version,
            ReadingRow.rescore_id,
            ReadingRow.created_at,
        )
        .join(Review, Review.id == ReadingRow.review_id)
        .where(ReadingRow.screening_id == screening_id)
        .order_by(ReadingRow.id)
    )
    return list(rulings), list(await session.execute(statement))
