"""The bulk repository functions batches are stored with, on SQLite and PostgreSQL."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Job, PairRow, Screening
from app.models.batch import Batch
from app.repositories import batches, jobs, pairs, screenings
from app.repositories.screenings import NewScreening
from app.vocabulary import Pair


def pair(n: int) -> Pair:
    return Pair(f"informal {n}", f"theorem t{n} : {n} = {n} := rfl")


async def count(session: AsyncSession, model: type[object]) -> int:
    return (await session.execute(select(func.count()).select_from(model))).scalar_one()


async def test_pair_ids_come_back_in_order_with_equal_pairs_stored_once(
    session: AsyncSession,
) -> None:
    existing = await pairs.get_or_create(session, pair(1))
    wanted = [pair(0), pair(1), pair(0), pair(2), pair(1)]
    ids = await pairs.get_or_create_many(session, wanted)
    assert ids[1] == ids[4] == existing.id and ids[0] == ids[2]
    assert len(set(ids)) == 3
    assert await count(session, PairRow) == 3
    for value, pair_id in zip(wanted, ids, strict=True):
        assert (await pairs.get_or_create(session, value)).id == pair_id


async def test_pair_ids_are_found_past_one_lookup_chunk(session: AsyncSession) -> None:
    many = [pair(n) for n in range(pairs.HASHES_PER_SELECT * 2 + 7)]
    ids = await pairs.get_or_create_many(session, many)
    assert len(set(ids)) == len(many) == await count(session, PairRow)
    assert await pairs.get_or_create_many(session, many[::-1]) == ids[::-1]


async def test_new_screenings_are_stored_queued_or_decided_with_their_jobs(
    session: AsyncSession,
) -> None:
    [pair_id] = await pairs.get_or_create_many(session, [pair(0)])
    assert await batches.add(
        session,
        batch_id="b",
        name=None,
        total=2,
        idempotency_key="k",
        body_sha256="0" * 64,
        scope="anonymous",
    )
    queued = NewScreening(
        id="q", pair_id=pair_id, external_id="x", batch_id="b", batch_index=0, confirmations=1
    )
    decided = NewScreening(
        id="d",
        pair_id=pair_id,
        external_id=None,
        batch_id="b",
        batch_index=1,
        confirmations=0,
        outcome="flagged",
        reasons=["judge_mismatch"],
        policy_version="p",
        evidence_version="e",
    )
    await screenings.add_many(session, [queued, decided])
    await jobs.enqueue_many(session, ["q"])
    await session.commit()
    rows = {s.id: s for s in (await session.execute(select(Screening))).scalars()}
    assert (rows["q"].status, rows["q"].outcome, rows["q"].finished_at) == ("queued", None, None)
    assert (rows["d"].status, rows["d"].outcome, rows["d"].reasons) == (
        "done",
        "flagged",
        ["judge_mismatch"],
    )
    assert rows["d"].finished_at is not None and rows["q"].confirmations == 1
    assert [j.screening_id for j in (await session.execute(select(Job))).scalars()] == ["q"]
    assert not await batches.add(
        session,
        batch_id="c",
        name=None,
        total=1,
        idempotency_key="k",
        body_sha256="1" * 64,
        scope="anonymous",
    )
    assert await count(session, Batch) == 1
