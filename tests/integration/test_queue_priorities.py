"""The job queue's claim order (issue 33): every due interactive job before any batch job,
and keys taking turns within a priority, on the real claim statement (SQLite and
PostgreSQL); the partial indexes that serve it; concurrent claimers still never share one."""

from __future__ import annotations

import asyncio
from collections import Counter

from sqlalchemy import event, inspect
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.repositories import jobs, pairs, screenings
from app.vocabulary import Pair, Priority

INTERACTIVE, BATCH = Priority.INTERACTIVE, Priority.BATCH


async def queue(
    sessions: async_sessionmaker[AsyncSession], key: str, count: int, priority: Priority
) -> list[str]:
    """`count` screenings of `key`, queued as intake queues a chunk (one enqueue_many)."""
    async with sessions() as session:
        pair = await pairs.get_or_create(session, Pair("informal", "formal"))
        ids = []
        for _ in range(count):
            screening = await screenings.add(
                session, pair_id=pair.id, external_id=key, batch_id=None, confirmations=0
            )
            ids.append(screening.id)
        await jobs.enqueue_many(session, ids, priority=priority, submitter=key)
        await session.commit()
    return ids


async def claim_each(
    sessions: async_sessionmaker[AsyncSession], count: int, owner: str = "w"
) -> list[str]:
    """The screening ids of `count` claims of one job each, in claim order; each job is
    done before the next claim (as a worker's would be, sooner or later)."""
    order: list[str] = []
    for _ in range(count):
        async with sessions() as session:
            claimed = await jobs.claim(session, owner=owner, lease_seconds=60, limit=1)
            assert [await jobs.complete(session, job.id, owner) for job in claimed] == [True]
            await session.commit()
        order += [job.screening_id for job in claimed]
    return order


async def test_an_interactive_job_is_claimed_before_an_older_batch_job(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    older = await queue(session_factory, "pipeline", 3, BATCH)
    single = await queue(session_factory, "agent", 1, INTERACTIVE)
    assert await claim_each(session_factory, 4) == single + older


async def test_batches_of_two_keys_take_turns(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """100 of A's queued first, then 10 of B's: all of B's are claimed within 20 claims,
    and each of those claims alternates (A's are not starved either)."""
    a = await queue(session_factory, "a", 100, BATCH)
    b = await queue(session_factory, "b", 10, BATCH)
    first = await claim_each(session_factory, 20)
    assert set(first) >= set(b)
    assert first[0::2] == a[:10] and first[1::2] == b
    assert await claim_each(session_factory, 90) == a[10:]


async def test_a_key_that_arrives_later_does_not_jump_the_queue_front(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """A key with nothing queued starts at the front of the queue, not at turn 1: after 40
    of A's were claimed, B's 10 alternate with A's next ones rather than all going first."""
    a = await queue(session_factory, "a", 60, BATCH)
    assert await claim_each(session_factory, 40) == a[:40]
    b = await queue(session_factory, "b", 10, BATCH)
    after = await claim_each(session_factory, 20)
    assert after[0::2] == a[40:50] and after[1::2] == b


async def test_a_keys_second_batch_queues_behind_its_first(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    first = await queue(session_factory, "a", 5, BATCH)
    second = await queue(session_factory, "a", 5, BATCH)
    other = await queue(session_factory, "b", 5, BATCH)
    order = await claim_each(session_factory, 15)
    assert [s for s in order if s in first + second] == first + second
    assert order[0::2][:5] == first and order[1::2][:5] == other


async def test_outstanding_counts_live_jobs_per_priority(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    await queue(session_factory, "a", 3, BATCH)
    await queue(session_factory, "a", 2, INTERACTIVE)
    await queue(session_factory, "b", 4, BATCH)
    async with session_factory() as session:
        claimed = await jobs.claim(session, owner="w", lease_seconds=60, limit=2)
        assert [await jobs.complete(session, job.id, "w") for job in claimed] == [True, True]
        await session.commit()
    async with session_factory() as session:
        # A's two interactive jobs were claimed first and are done: no longer outstanding.
        assert await jobs.outstanding(session, "a") == {INTERACTIVE: 0, BATCH: 3}
        assert await jobs.outstanding(session, "b") == {INTERACTIVE: 0, BATCH: 4}


async def test_the_live_job_indexes_are_partial(engine: AsyncEngine) -> None:
    async with engine.connect() as connection:
        indexes = await connection.run_sync(lambda c: inspect(c).get_indexes("jobs"))
    by_name = {index["name"]: index for index in indexes}
    claim = by_name["ix_jobs_queued_claim_order"]
    assert claim["column_names"] == ["status", "priority_rank", "turn", "id"]
    live = by_name["ix_jobs_live_submitter"]
    assert live["column_names"] == ["submitter", "priority_rank", "turn"]
    dialect = engine.dialect.name
    where = {
        name: by_name[name]["dialect_options"][f"{dialect}_where"]
        for name in by_name
        if f"{dialect}_where" in by_name[name].get("dialect_options", {})
    }
    assert "queued" in str(where["ix_jobs_queued_claim_order"])
    assert "running" in str(where["ix_jobs_live_submitter"])


async def test_the_claims_scan_of_due_jobs_walks_the_partial_index(
    engine: AsyncEngine, session_factory: async_sessionmaker[AsyncSession]
) -> None:
    """The claim's statement, as sent, walks ix_jobs_queued_claim_order in its order: no
    sort of every due job on each claim (SQLite would take ix_jobs_status_run_after and
    sort, but for its `+run_after`)."""
    await queue(session_factory, "a", 3, BATCH)
    sent: list[tuple[str, object]] = []

    def capture(conn: object, cursor: object, statement: str, params: object, *_: object) -> None:
        if "priority_rank" in statement and statement.lstrip().upper().startswith("WITH"):
            sent.append((statement, params))

    event.listen(engine.sync_engine, "before_cursor_execute", capture)
    try:
        async with session_factory() as session:
            await jobs.claim(session, owner="w", lease_seconds=60, limit=2)
            await session.rollback()
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", capture)
    assert sent, "the claim sent no statement ordered by priority_rank"
    statement, params = sent[-1]
    postgres = engine.dialect.name == "postgresql"
    async with engine.connect() as connection:
        if postgres:  # a table this small would otherwise be read whole
            await connection.exec_driver_sql("SET enable_seqscan = off")
        explain = "EXPLAIN " if postgres else "EXPLAIN QUERY PLAN "
        rows = await connection.exec_driver_sql(explain + statement, params)  # type: ignore[arg-type]
        plan = "\n".join(str(row) for row in rows.all())
    assert "ix_jobs_queued_claim_order" in plan, plan
    assert "TEMP B-TREE" not in plan and "Sort" not in plan, plan


async def test_concurrent_claimers_across_priorities_and_keys_never_share_a_job(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    expected = set(await queue(session_factory, "a", 60, BATCH))
    expected |= set(await queue(session_factory, "b", 30, BATCH))
    expected |= set(await queue(session_factory, "c", 10, INTERACTIVE))

    async def claim(owner: str) -> list[str]:
        async with session_factory() as session:
            claimed = await jobs.claim(session, owner=owner, lease_seconds=60, limit=5)
            await session.commit()
        return [job.screening_id for job in claimed]

    got: list[str] = []
    for _ in range(len(expected)):  # bound: each round claims at least one until none remain
        rounds = await asyncio.gather(*(claim(f"w{i}") for i in range(6)))
        taken = [sid for batch in rounds for sid in batch]
        if not taken:
            break
        got += taken
    assert [sid for sid, n in Counter(got).items() if n > 1] == []
    assert set(got) == expected
    async with session_factory() as session:
        assert await jobs.outstanding(session, "a") == {INTERACTIVE: 0, BATCH: 60}


async def test_a_claim_with_a_batch_limit_takes_the_interactive_jobs_and_that_many_batch_jobs(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """A worker keeping a slot for interactive work (app/worker/runner.py) claims with a
    `batch_limit`: every due interactive job within `limit`, then batch jobs up to it."""
    batch = await queue(session_factory, "pipeline", 5, BATCH)
    singles = await queue(session_factory, "agent", 2, INTERACTIVE)

    async def claim(limit: int, batch_limit: int) -> list[str]:
        async with session_factory() as session:
            claimed = await jobs.claim(
                session, owner="w", lease_seconds=60, limit=limit, batch_limit=batch_limit
            )
            await session.commit()
        return sorted(job.screening_id for job in claimed)

    assert await claim(4, 1) == sorted(singles + batch[:1])
    assert await claim(4, 0) == []  # no interactive job left, and no room for batch work
    assert await claim(3, 3) == sorted(batch[1:4])
    assert await claim(3, 5) == batch[4:]


async def test_a_claim_with_a_batch_limit_never_takes_more_than_its_limit(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    """Interactive jobs that fill the limit leave no room for batch work, whatever
    `batch_limit` says: a worker is never handed more jobs than its free slots."""
    await queue(session_factory, "pipeline", 3, BATCH)
    singles = await queue(session_factory, "agent", 3, INTERACTIVE)
    async with session_factory() as session:
        claimed = await jobs.claim(session, owner="w", lease_seconds=60, limit=2, batch_limit=1)
        await session.commit()
    assert sorted(job.screening_id for job in claimed) == sorted(singles[:2])
