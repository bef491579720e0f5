"""A re-scoring run over the database: chunks of finished screenings, each replayed
(`replay.py`), compared (`diff.py`), and, when applying, written (`repositories/rescores.py`)
in one transaction per chunk. The CLI and the API both run this.

Skipped, and counted by cause: screenings given up as `job_failed` (their outcome is no
ruling to replay) and screenings missing a role's first call. Screenings still queued or
running are not in scope. A moved outcome is queued for review as the pipeline would
queue it (a needs_review always, the others as audit samples at the audit rate); an item
already in the queue stays as it is.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.evidence import EVIDENCE_VERSION
from app.policy import POLICY_VERSION
from app.policy.reasons import Reason
from app.repositories import rescores
from app.repositories.rescores import Scope, StoredScreening
from app.rescore.diff import Change, Diff, compare
from app.rescore.replay import CURRENT_PARSER, Parser, StoredCall, replay, replayable
from app.review_queue.intake import Rng, queue_for_review

CHUNK = 500
JOB_FAILED = Reason.JOB_FAILED.value


@dataclass(frozen=True, slots=True)
class RescoreRun:
    diff: Diff
    # The `rescores` row of an applied run; None for a dry run, which writes nothing.
    rescore_id: str | None


async def rescore(
    sessions: async_sessionmaker[AsyncSession],
    scope: Scope,
    *,
    apply: bool,
    actor: str,
    format_retries: int,
    audit_rate: float,
    parser: Parser = CURRENT_PARSER,
    chunk: int = CHUNK,
    progress: Callable[[Diff], None] | None = None,
    rng: Rng = random.random,
) -> RescoreRun:
    diff = Diff(parser.version, POLICY_VERSION, EVIDENCE_VERSION)
    rescore_id = str(uuid.uuid4()) if apply else None
    if rescore_id is not None:
        async with sessions() as session:
            versions = {"parser": parser.version, "policy": POLICY_VERSION}
            versions["evidence"] = EVIDENCE_VERSION
            await rescores.begin(session, rescore_id, actor=actor, scope=scope, versions=versions)
            await session.commit()
    after: str | None = None
    while True:
        async with sessions() as session:
            stored = await rescores.screenings_after(session, scope, after, chunk)
            if not stored:
                break
            calls = await rescores.stored_calls(session, [s.current.screening_id for s in stored])
            changes = [
                change
                for screening in stored
                if (
                    change := _replayed(
                        screening,
                        calls.get(screening.current.screening_id, []),
                        diff,
                        parser,
                        format_retries,
                    )
                )
                is not None
            ]
            if rescore_id is not None and changes:
                await _apply(session, rescore_id, changes, diff, audit_rate, rng)
                await session.commit()
        after = stored[-1].current.screening_id
        if progress is not None:
            progress(diff)
    if rescore_id is not None:
        async with sessions() as session:
            await rescores.finish(session, rescore_id, diff.as_json())
            await session.commit()
    return RescoreRun(diff, rescore_id)


def _replayed(
    screening: StoredScreening,
    calls: list[StoredCall],
    diff: Diff,
    parser: Parser,
    format_retries: int,
) -> Change | None:
    """Replay one screening into `diff`; the change to write, if there is one to write."""
    current = screening.current
    if JOB_FAILED in current.reasons:
        diff.skip(JOB_FAILED)
        return None
    if not replayable(calls):
        diff.skip("no_stored_calls")
        return None
    replayed = replay(
        screening.pair,
        calls,
        confirmations=screening.confirmations,
        format_retries=format_retries,
        parser=parser,
    )
    before = {call.review_id: call.reading for call in calls}
    change = compare(current, replayed.ruling, before, replayed.readings)
    diff.add(change, incomplete=replayed.incomplete)
    return None if change is None or change.unversioned else change


async def _apply(
    session: AsyncSession,
    rescore_id: str,
    changes: list[Change],
    diff: Diff,
    audit_rate: float,
    rng: Rng,
) -> None:
    written = await rescores.apply_changes(session, rescore_id, changes)
    for change in written:
        ruling = change.ruling.ruling
        await queue_for_review(
            session,
            change.current.screening_id,
            ruling.outcome.value,
            ruling.reasons,
            audit_rate=audit_rate,
            rng=rng,
        )
    diff.applied += len(written)
    diff.raced += len(changes) - len(written)
