"""Group commit: the database work of many running screenings shares one transaction.

A running screening hands its work here ("start this claimed screening", "store this
review", "finish this job with this ruling") and waits until it is committed, so a call's
review is durable before the call counts as done, as with one transaction per write.
Whoever writes first while no flush runs starts one; the flush drains everything queued
meanwhile into one transaction per round, so under load each commit carries many writes
and costs its round trips once. Within a round, writes of one kind are one statement each
(or one executemany), never one per screening: starting claimed screenings, storing
reviews, completing jobs, recording outcomes, adding review queue items.

If a round's transaction fails for what one write holds (a constraint), its writes are
tried again one per transaction, so a bad write fails only its own caller; if the database
did not answer, every write of the round fails with that error at once.

Nothing here holds a transaction across an LLM call: writers wait for a commit, never the
other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.pipeline.plan import PastCall
from app.pipeline.review_records import past_call
from app.pipeline.ruling import ScreeningRuling
from app.policy import Panel, panel_of
from app.repositories import jobs, queue_items, reviews, screenings
from app.repositories.reviews import ReviewRecord
from app.repositories.screenings import DONE, NewOutcome
from app.review_queue.enqueue import queue_item
from app.vocabulary import Pair, Role

# Writes per transaction; more wait for the next round.
MAX_WRITES_PER_COMMIT = 256


class JobLost(Exception):
    """This worker no longer holds the job; another worker owns its outcome."""


@dataclass(frozen=True, slots=True)
class Start:
    """Mark a claimed screening running and read what running it needs; a screening done
    already (or gone) has its job completed instead."""

    job_id: int
    owner: str
    screening_id: str


@dataclass(frozen=True, slots=True)
class Started:
    pair: Pair
    confirmations: int
    # Stored calls by role (every judge's under Role.JUDGE), and each judge's by name.
    past: dict[Role, list[PastCall]]
    judges: dict[str, list[PastCall]]
    # The panel it is screened by; None for the single judge.
    panel: Panel | None = None
    # Its replies were supplied by the client (queued only for the Lean check): no model
    # is asked, the stored replies are ruled.
    supplied: bool = False


@dataclass(frozen=True, slots=True)
class Finish:
    """Complete the job and record the screening's outcome, only while `owner` holds it."""

    job_id: int
    owner: str
    screening_id: str
    ruling: ScreeningRuling
    audit_rate: float
    # FAITHSCREEN_REVIEW_DOUBLE_RATE: a new queue item needs two people's decisions.
    double_rate: float = 0.0


Write = Start | ReviewRecord | Finish
_Queued = tuple[Write, "asyncio.Future[object]"]
# Per write (by id()): its result, or the exception its caller gets.
_Results = dict[int, object]


class Recorder:
    def __init__(self, session_factory: async_sessionmaker[AsyncSession]) -> None:
        self._sessions = session_factory
        self._queued: list[_Queued] = []
        self._flush: asyncio.Task[None] | None = None

    async def start(self, start: Start) -> Started | None:
        """None if the screening needs no run (its job is completed then)."""
        started = await self._submit(start)
        assert started is None or isinstance(started, Started)
        return started

    async def store(self, record: ReviewRecord) -> None:
        """Returns once the review is committed (a stored attempt is left as it is)."""
        await self._submit(record)

    async def finish(self, finish: Finish) -> None:
        """Returns once job and outcome are committed; JobLost if the job is not held."""
        await self._submit(finish)

    async def idle(self) -> None:
        """Until every queued write has been committed or failed."""
        while self._flush is not None and not self._flush.done():
            await asyncio.wait([self._flush])

    async def _submit(self, write: Write) -> object:
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._queued.append((write, done))
        if self._flush is None or self._flush.done():
            # Its own task: a caller cancelled meanwhile must not cancel others' writes.
            self._flush = asyncio.create_task(self._flush_queued())
        return await done

    async def _flush_queued(self) -> None:
        round_: list[_Queued] = []
        try:
            while self._queued:
                round_ = self._queued[:MAX_WRITES_PER_COMMIT]
                del self._queued[:MAX_WRITES_PER_COMMIT]
                await self._commit_round(round_)
        except BaseException:
            # Cancelled (the loop is closing): no caller may wait for ever.
            for _, done in [*round_, *self._queued]:
                done.cancel()
            self._queued.clear()
            raise

    async def _commit_round(self, round_: list[_Queued]) -> None:
        try:
            results = await self._write([write for write, _ in round_])
        except Exception as error:
            if len(round_) == 1 or _database_failed(error):
                for _, done in round_:
                    _settle(done, error)
                return
            for queued in round_:
                await self._commit_round([queued])
            return
        for write, done in round_:
            _settle(done, results.get(id(write)))

    async def _write(self, writes: Sequence[Write]) -> _Results:
        """One transaction for all of `writes`."""
        results: _Results = {}
        async with self._sessions() as session:
            await _start_all(session, [w for w in writes if isinstance(w, Start)], results)
            stored = [write for write in writes if isinstance(write, ReviewRecord)]
            await reviews.add_many_unless_stored(session, stored)
            await _finish_all(session, [w for w in writes if isinstance(w, Finish)], results)
            await session.commit()
        return results


async def _start_all(session: AsyncSession, starts: Sequence[Start], results: _Results) -> None:
    if not starts:
        return
    found = await screenings.to_run(session, [start.screening_id for start in starts])
    runnable = {row.id: row for row in found if row.status != DONE}
    for owner in {start.owner for start in starts}:
        ended = [s.job_id for s in starts if s.owner == owner and s.screening_id not in runnable]
        await jobs.complete_many(session, ended, owner)
    await screenings.mark_running_many(session, list(runnable))
    past: dict[str, dict[Role, list[PastCall]]] = {id_: {} for id_ in runnable}
    judges: dict[str, dict[str, list[PastCall]]] = {id_: {} for id_ in runnable}
    supplied: set[str] = set()
    for review in await reviews.for_screenings(session, list(runnable)):
        if review.supplied:
            supplied.add(review.screening_id)
        call = past_call(review)
        past[review.screening_id].setdefault(review.role, []).append(call)
        if review.role == Role.JUDGE:
            judges[review.screening_id].setdefault(review.judge_name, []).append(call)
    for start in starts:
        row = runnable.get(start.screening_id)
        if row is not None:
            pair = Pair(row.informal, row.formal, row.header)
            panel = panel_of(row.judges, row.panel_rule)
            started = Started(
                pair, row.confirmations, past[row.id], judges[row.id], panel, row.id in supplied
            )
            results[id(start)] = started


async def _finish_all(session: AsyncSession, finishes: Sequence[Finish], results: _Results) -> None:
    held_finishes: list[Finish] = []
    for owner in {finish.owner for finish in finishes}:
        mine = [finish for finish in finishes if finish.owner == owner]
        held = await jobs.complete_many(session, [finish.job_id for finish in mine], owner)
        for finish in mine:
            if finish.job_id in held:
                held_finishes.append(finish)
            else:
                results[id(finish)] = JobLost(finish.job_id)
    await _record_all(session, held_finishes)


async def _record_all(session: AsyncSession, finishes: Sequence[Finish]) -> None:
    """Outcomes, and the review queue items they call for, in the transaction that
    completes their jobs (so no outcome that needs a person is ever stored without its
    item); a screening done already gets neither."""
    outcomes = [_outcome(finish) for finish in finishes]
    recorded = await screenings.record_outcomes(session, outcomes)
    items = (
        queue_item(
            finish.screening_id,
            finish.ruling.ruling.outcome,
            finish.ruling.ruling.reasons,
            recorded[finish.screening_id],
            audit_rate=finish.audit_rate,
            double_rate=finish.double_rate,
        )
        for finish in finishes
        if finish.screening_id in recorded
    )
    new = [item for item in items if item is not None]
    await queue_items.add_many(session, new)


def _outcome(finish: Finish) -> NewOutcome:
    return NewOutcome(screening_id=finish.screening_id, **finish.ruling.outcome_fields())


def _database_failed(error: Exception) -> bool:
    """The database did not answer (or the pool had no connection): every write of the
    round fails alike, and trying them one by one would wait out each timeout again."""
    if isinstance(error, PoolTimeout | OperationalError | InterfaceError):
        return True
    return isinstance(error, DBAPIError) and error.connection_invalidated


def _settle(done: asyncio.Future[object], result: object) -> None:
    if done.done():  # its caller was cancelled; the write went ahead all the same
        return
    if isinstance(result, Exception):
        done.set_exception(result)
    else:
        done.set_result(result)
