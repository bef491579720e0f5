"""Pairs and screenings repositories, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.models import PairRow, Screening
from app.repositories import batches, pairs, reviews, screenings
from app.repositories.keyset import InvalidCursor
from app.repositories.reviews import ReviewRecord
from app.vocabulary import Pair

PAIR = Pair(
    "Every even number is even.", "theorem t (n : ℕ) (h : Even n) : Even n", "import Mathlib"
)
FINDING = {"code": "sorry_in_statement", "message": "uses sorry", "severity": "flag"}


async def new_screening(session: AsyncSession, **fields: object) -> Screening:
    pair = await pairs.get_or_create(session, PAIR)
    values: dict[str, object] = {"external_id": None, "batch_id": None, "confirmations": 0}
    return await screenings.add(session, pair_id=pair.id, **(values | fields))  # type: ignore[arg-type]


# --- pairs ------------------------------------------------------------------------------


def test_content_hash_keeps_field_boundaries() -> None:
    assert pairs.content_hash(Pair("ab", "c")) != pairs.content_hash(Pair("a", "bc"))
    assert pairs.content_hash(Pair("a", "b", "")) != pairs.content_hash(Pair("a", "", "b"))
    assert pairs.content_hash(PAIR) == pairs.content_hash(
        Pair(*[PAIR.informal, PAIR.formal, PAIR.header])
    )
    assert len(pairs.content_hash(PAIR)) == 64


async def test_the_same_pair_is_stored_once(session: AsyncSession) -> None:
    first = await pairs.get_or_create(session, PAIR)
    again = await pairs.get_or_create(session, Pair(PAIR.informal, PAIR.formal, PAIR.header))
    other = await pairs.get_or_create(session, Pair(PAIR.informal, PAIR.formal, ""))
    assert again.id == first.id
    assert other.id != first.id
    assert (first.informal, first.formal, first.header) == (PAIR.informal, PAIR.formal, PAIR.header)
    assert first.created_at.tzinfo == UTC
    assert (await session.execute(sa.select(sa.func.count()).select_from(PairRow))).scalar() == 2


async def test_concurrent_sessions_storing_one_pair_make_one_row(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async def store() -> int:
        async with session_factory() as session:
            row = await pairs.get_or_create(session, PAIR)
            await session.commit()
            return row.id

    ids = await asyncio.gather(*(store() for _ in range(8)))
    assert len(set(ids)) == 1
    async with session_factory() as session:
        count = (await session.execute(sa.select(sa.func.count()).select_from(PairRow))).scalar()
    assert count == 1


# --- screenings: add, get ---------------------------------------------------------------


async def test_add_then_get_loads_the_pair_and_ordered_reviews(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        await batches.add(
            session,
            batch_id="b" * 36,
            name=None,
            total=1,
            idempotency_key=None,
            body_sha256="0" * 64,
        )
        added = await new_screening(
            session, external_id="ext-1", batch_id="b" * 36, confirmations=2
        )
        for role, attempt in [("translator", 2), ("judge", 1), ("translator", 1)]:
            record = ReviewRecord(
                screening_id=added.id,
                role=role,
                attempt=attempt,
                purpose="review",
                verdict="faithful",
                parse_status="ok",
                parser_version="p1",
            )
            await reviews.add(session, record)
        await session.commit()
    async with session_factory() as session:
        got = await screenings.get(session, added.id)
    assert got is not None
    assert (got.status, got.outcome, got.external_id, got.confirmations) == (
        "queued",
        None,
        "ext-1",
        2,
    )
    assert (got.reasons, got.evidence, got.finished_at) == ([], [], None)
    assert got.pair.formal == PAIR.formal
    assert [(r.role, r.attempt) for r in got.reviews] == [
        ("judge", 1),
        ("translator", 1),
        ("translator", 2),
    ]
    assert len(got.id) == 36


async def test_get_of_an_unknown_id_is_none(session: AsyncSession) -> None:
    assert await screenings.get(session, "no-such-screening") is None


# --- screenings: outcome ----------------------------------------------------------------


async def test_an_outcome_is_recorded_exactly_once(session: AsyncSession) -> None:
    screening = await new_screening(session)
    await screenings.mark_running_many(session, [screening.id])
    assert (await screenings.get(session, screening.id)).status == "running"  # type: ignore[union-attr]
    first = await screenings.record_outcome(
        session,
        screening.id,
        outcome="flagged",
        reasons=["judge_mismatch"],
        evidence=[FINDING],
        policy_version="policy-1",
        evidence_version="evidence-1",
    )
    second = await screenings.record_outcome(
        session,
        screening.id,
        outcome="passed",
        reasons=[],
        evidence=[],
        policy_version="policy-2",
        evidence_version="evidence-2",
        error="late writer",
    )
    assert (first, second) == (True, False)
    stored = await screenings.get(session, screening.id)
    assert stored is not None
    assert (stored.status, stored.outcome, stored.reasons) == (
        "done",
        "flagged",
        ["judge_mismatch"],
    )
    assert (stored.evidence, stored.policy_version, stored.error) == ([FINDING], "policy-1", None)
    assert stored.finished_at is not None and stored.finished_at.tzinfo == UTC
    await screenings.mark_running_many(session, [screening.id])
    assert (await screenings.get(session, screening.id)).status == "done"  # type: ignore[union-attr]


async def test_racing_outcomes_leave_exactly_one(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    async with session_factory() as session:
        screening_id = (await new_screening(session)).id
        await session.commit()

    async def decide(outcome: str) -> bool:
        async with session_factory() as session:
            done = await screenings.record_outcome(
                session,
                screening_id,
                outcome=outcome,
                reasons=[outcome],
                evidence=[],
                policy_version="p",
                evidence_version="e",
            )
            await session.commit()
            return done

    outcomes = ["passed", "flagged", "needs_review"] * 3
    won = await asyncio.gather(*(decide(o) for o in outcomes))
    assert won.count(True) == 1
    winner = outcomes[won.index(True)]
    async with session_factory() as session:
        stored = await screenings.get(session, screening_id)
    assert stored is not None and (stored.outcome, stored.reasons) == (winner, [winner])


async def test_an_unknown_outcome_is_refused_by_the_database(session: AsyncSession) -> None:
    screening = await new_screening(session)
    with pytest.raises(sa.exc.StatementError, match="'certified' cannot be stored"):
        await screenings.record_outcome(
            session,
            screening.id,
            outcome="certified",
            reasons=[],
            evidence=[],
            policy_version=None,
            evidence_version=None,
        )
    # The database's CHECK refuses it too, for a write that bypasses the column type.
    with pytest.raises(sa.exc.IntegrityError):
        await session.execute(
            sa.update(Screening)
            .where(Screening.id == screening.id)
            .values(outcome=sa.literal_column("'certified'"))
        )


# --- screenings: listing ----------------------------------------------------------------

BASE = datetime(2026, 1, 1, tzinfo=UTC)


async def seed(session: AsyncSession, count: int) -> list[Screening]:
    """`count` screenings, three to a timestamp (ties decided by id), newest first."""
    pair = await pairs.get_or_create(session, PAIR)
    rows = [
        Screening(
            pair_id=pair.id,
            external_id=f"ext-{i % 2}",
            batch_id=None,
            confirmations=0,
            created_at=BASE + timedelta(seconds=i // 3),
        )
        for i in range(count)
    ]
    session.add_all(rows)
    await session.flush()
    return sorted(rows, key=lambda s: (s.created_at, s.id), reverse=True)


async def all_pages(session: AsyncSession, limit: int, **filters: str) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        page, cursor = await screenings.list_page(session, cursor=cursor, limit=limit, **filters)
        pages.append([s.id for s in page])
        if cursor is None:
            return pages


async def test_pages_are_newest_first_without_gaps_or_duplicates(session: AsyncSession) -> None:
    expected = [s.id for s in await seed(session, 23)]
    pages = await all_pages(session, limit=5)
    assert [len(p) for p in pages] == [5, 5, 5, 5, 3]
    assert [i for page in pages for i in page] == expected


async def test_a_full_last_page_has_no_next_cursor(session: AsyncSession) -> None:
    await seed(session, 10)
    pages = await all_pages(session, limit=5)
    assert [len(p) for p in pages] == [5, 5]


async def test_paging_is_stable_when_new_screenings_arrive(session: AsyncSession) -> None:
    expected = [s.id for s in await seed(session, 12)]
    first, cursor = await screenings.list_page(session, cursor=None, limit=5)
    await new_screening(session)  # newer than everything listed: not on later pages
    rest: list[str] = []
    while cursor is not None:
        page, cursor = await screenings.list_page(session, cursor=cursor, limit=5)
        rest += [s.id for s in page]
    assert [s.id for s in first] + rest == expected


async def test_filters_apply_to_every_page(session: AsyncSession) -> None:
    seeded = await seed(session, 14)
    await screenings.record_outcome(
        session,
        seeded[0].id,
        outcome="flagged",
        reasons=[],
        evidence=[],
        policy_version=None,
        evidence_version=None,
    )
    ext1 = [s.id for s in seeded if s.external_id == "ext-1"]
    assert [i for p in await all_pages(session, 2, external_id="ext-1") for i in p] == ext1
    assert await all_pages(session, 2, outcome="flagged") == [[seeded[0].id]]
    assert len([i for p in await all_pages(session, 4, status="queued") for i in p]) == 13
    assert await all_pages(session, 3, batch_id="none-such") == [[]]


async def test_listed_screenings_carry_their_pair(session: AsyncSession) -> None:
    await seed(session, 2)
    page, _ = await screenings.list_page(session, cursor=None, limit=5)
    assert {s.pair.formal for s in page} == {PAIR.formal}


def b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor!",
        "",
        b64("garbage"),
        b64("2026-01-01T00:00:00+00:00"),
        b64("2026-01-01T00:00:00+00:00|"),
        b64("2026-01-01T00:00:00|some-id"),
        b64("yesterday|some-id"),
        base64.urlsafe_b64encode(b"\xff\xfe|x").decode(),
    ],
)
async def test_an_invalid_cursor_is_refused(session: AsyncSession, cursor: str) -> None:
    with pytest.raises(InvalidCursor):
        await screenings.list_page(session, cursor=cursor, limit=5)


async def test_limit_below_one_is_a_value_error(session: AsyncSession) -> None:
    with pytest.raises(ValueError):
        await screenings.list_page(session, cursor=None, limit=0)
