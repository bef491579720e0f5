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

import asyncio
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract.reading import Reading
from app.errors import NotFound
from app.evidence import EVIDENCE_VERSION
from app.lean import LEAN_READER_VERSION
from app.models.lean_check import LeanCheck
from app.pipeline.lean_step import ruled_after_lean, stopped_by_lean, stored_reading
from app.pipeline.ruling import ScreeningRuling
from app.policy import POLICY_VERSION
from app.policy.reasons import Reason
from app.repositories import batches, lean_checks, rescores
from app.repositories.rescore_rows import CurrentState, StoredCall
from app.repositories.rescores import Scope, StoredScreening
from app.rescore.diff import Change, Diff, compare
from app.rescore.replay import CURRENT_PARSER, Parser, replay, replayable
from app.review_queue.enqueue import Rng, queue_for_review

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
    double_rate: float = 0.0,
    parser: Parser = CURRENT_PARSER,
    chunk: int = CHUNK,
    progress: Callable[[Diff], None] | None = None,
    rng: Rng = random.random,
) -> RescoreRun:
    """Replay every finished screening in `scope`; with `apply`, write what changed.
    Raises NotFound for a batch that does not exist. A run that fails part-way keeps the
    chunks it committed, and its `rescores` row says so with the diff up to there."""
    if scope.batch_id is not None:
        async with sessions() as session:
            if await batches.get(session, scope.batch_id) is None:
                raise NotFound("batch", scope.batch_id)
    diff = Diff(parser.version, POLICY_VERSION, EVIDENCE_VERSION)
    rates = _QueueRates(audit_rate, double_rate)
    run = _Run(sessions, scope, diff, parser, format_retries, rates, rng, chunk)
    if apply:
        run.rescore_id = await run.begin(actor)
    state = "failed"
    try:
        after = await run.next_chunk(None)
        while after is not None:
            if progress is not None:
                progress(diff)
            after = await run.next_chunk(after)
        state = "done"
    finally:
        await run.finish(state)
    return RescoreRun(diff, run.rescore_id)


@dataclass(frozen=True, slots=True)
class _QueueRates:
    """How a screening moved by re-scoring is sampled into the queue: as at intake."""

    audit: float
    double: float


@dataclass(slots=True)
class _Run:
    sessions: async_sessionmaker[AsyncSession]
    scope: Scope
    diff: Diff
    parser: Parser
    format_retries: int
    rates: _QueueRates
    rng: Rng
    chunk: int
    rescore_id: str | None = None

    async def begin(self, actor: str) -> str:
        rescore_id = str(uuid.uuid4())
        diff = self.diff
        versions = {"parser": diff.parser_version, "policy": diff.policy_version}
        versions["evidence"] = diff.evidence_version
        async with self.sessions() as session:
            await rescores.begin(
                session, rescore_id, actor=actor, scope=self.scope, versions=versions
            )
            await session.commit()
        return rescore_id

    async def next_chunk(self, after: str | None) -> str | None:
        """Replay (and apply) the chunk after `after`; its last screening id, None at the
        end."""
        async with self.sessions() as session:
            stored = await rescores.screenings_after(session, self.scope, after, self.chunk)
            if not stored:
                return None
            ids = [s.current.screening_id for s in stored]
            calls = await rescores.stored_calls(session, ids)
            # Lean is never asked again: its stored answer is read again (app/lean/body.py).
            checks = await lean_checks.for_screenings(session, ids)
            # The replay is CPU work (the evidence checks above all): off the event loop,
            # which the API and an embedded worker share.
            changes = await asyncio.to_thread(
                _replay_all, stored, calls, self.diff, self.parser, self.format_retries, checks
            )
            if self.rescore_id is not None and changes:
                await _apply(session, self.rescore_id, changes, self.diff, self.rates, self.rng)
                await session.commit()
        return stored[-1].current.screening_id

    async def finish(self, state: str) -> None:
        if self.rescore_id is None:
            return
        async with self.sessions() as session:
            await rescores.finish(session, self.rescore_id, {"state": state, **self.diff.as_json()})
            await session.commit()


def _replay_all(
    stored: list[StoredScreening],
    calls: dict[str, list[StoredCall]],
    diff: Diff,
    parser: Parser,
    format_retries: int,
    checks: dict[str, LeanCheck] | None = None,
) -> list[Change]:
    checks = checks or {}
    changes = (
        _replayed(
            s,
            calls.get(s.current.screening_id, []),
            diff,
            parser,
            format_retries,
            checks.get(s.current.screening_id),
        )
        for s in stored
    )
    return [change for change in changes if change is not None]


def _replayed(
    screening: StoredScreening,
    calls: list[StoredCall],
    diff: Diff,
    parser: Parser,
    format_retries: int,
    check: LeanCheck | None = None,
) -> Change | None:
    """Replay one screening into `diff`; the change to write, if there is one to write.
    `check`: its stored Lean check, whose answer is ruled first (app/policy/lean.py)."""
    current = screening.current
    if JOB_FAILED in current.reasons:
        diff.skip(current, JOB_FAILED)
        return None
    lean = None if check is None else (check.reader_version, LEAN_READER_VERSION)
    if check is not None:  # its stored body is read again, by today's Lean reader
        diff.readers[LEAN_READER_VERSION] += 1
    stopped = None if check is None else stopped_by_lean(screening.pair, stored_reading(check))
    if stopped is not None:
        return _ruled(diff, current, stopped, {}, {}, incomplete=False, lean=lean)
    if not replayable(calls, screening.panel):
        diff.skip(current, "no_stored_calls")
        return None
    replayed = replay(
        screening.pair,
        calls,
        confirmations=screening.confirmations,
        format_retries=format_retries,
        parser=parser,
        panel=screening.panel,
    )
    diff.readers.update(reading.parser_version for reading in replayed.readings.values())
    before = {call.review_id: call.reading for call in calls}
    ruling = replayed.ruling if check is None else ruled_after_lean(replayed.ruling)
    return _ruled(diff, current, ruling, before, replayed.readings, replayed.incomplete, lean)


def _ruled(
    diff: Diff,
    current: CurrentState,
    ruling: ScreeningRuling,
    before: dict[int, Reading],
    after: dict[int, Reading],
    incomplete: bool,
    lean: tuple[str | None, str] | None = None,
) -> Change | None:
    change = compare(current, ruling, before, after, lean)
    diff.add(change, incomplete=incomplete)
    diff.calibrate(current, ruling.ruling.outcome)
    return None if change is None or change.unversioned else change


async def _apply(
    session: AsyncSession,
    rescore_id: str,
    changes: list[Change],
    diff: Diff,
    rates: _QueueRates,
    rng: Rng,
) -> None:
    written = await rescores.apply_changes(session, rescore_id, changes)
    for change in written:
        if not change.moved:
            continue
        ruling = change.ruling.ruling
        screening_id = change.current.screening_id
        if not await queue_for_review(
            session, screening_id, ruling.outcome, ruling.reasons,
            audit_rate=rates.audit, double_rate=rates.double, rng=rng,
        ):  # fmt: skip
            # Already in the queue: an item still waiting shows the reasons it has now.
            await rescores.refresh_queue_reasons(session, screening_id, list(ruling.reasons))
    diff.applied += sum(1 for change in written if change.moved)
    diff.restamps_applied += sum(1 for change in written if not change.moved)
    diff.raced += len(changes) - len(written)
