"""Reviews: one per (screening, role, attempt), stored byte for byte, never changed."""

from __future__ import annotations

import dataclasses

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Review, ReviewIsAppendOnly
from app.repositories import pairs, reviews, screenings
from app.repositories.reviews import ReviewRecord
from app.vocabulary import Pair, ParseStatus, Purpose, Role, Verdict

RAW = "VERDICT: FAITHFUL\r\n  trailing spaces  \n\tünïcödé ∀ x, x = x\r\n\n"
MESSAGES = [{"role": "system", "content": "Be strict."}, {"role": "user", "content": "Pair..."}]


async def new_screening_id(session: AsyncSession) -> str:
    pair = await pairs.get_or_create(session, Pair("informal", "formal"))
    screening = await screenings.add(
        session, pair_id=pair.id, external_id=None, batch_id=None, confirmations=0
    )
    return screening.id


def record(screening_id: str, **changes: object) -> ReviewRecord:
    full = ReviewRecord(
        screening_id=screening_id,
        role=Role.TRANSLATOR,
        attempt=1,
        purpose=Purpose.REVIEW,
        prompt_version="prompt-1",
        messages=MESSAGES,
        messages_sha256="c" * 64,
        raw_response=RAW,
        raw_body='{"choices": []}',
        verdict=Verdict.FAITHFUL,
        parse_status=ParseStatus.OK,
        back_translation="Every x equals itself.",
        issues=None,
        finish_reason="stop",
        refusal=None,
        model="model-x",
        usage={"prompt_tokens": 10, "completion_tokens": 5},
        http_status=200,
        latency_ms=1234,
        error=None,
        parser_version="parser-1",
        supplied=False,
        max_tokens=2048,
    )
    return dataclasses.replace(full, **changes)  # type: ignore[arg-type]


def columns(review: Review) -> dict[str, object]:
    names = [f.name for f in dataclasses.fields(ReviewRecord)]
    return {name: getattr(review, name) for name in names}


async def test_a_review_is_stored_exactly_as_given(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    assert await reviews.add(session, record(screening_id))
    session.expunge_all()
    [stored] = await reviews.for_screening(session, screening_id)
    assert columns(stored) == record(screening_id).row()
    assert stored.raw_response == RAW
    # Vocabulary columns load as members (StrEnumType), whatever was bound.
    assert stored.role is Role.TRANSLATOR and stored.purpose is Purpose.REVIEW
    assert stored.verdict is Verdict.FAITHFUL and stored.parse_status is ParseStatus.OK
    assert stored.id is not None and stored.created_at.tzinfo is not None


async def test_a_second_review_for_the_same_attempt_is_not_stored(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    assert await reviews.add(session, record(screening_id))
    again = record(screening_id, raw_response="VERDICT: MISMATCH", verdict="mismatch")
    assert not await reviews.add(session, again)
    session.expunge_all()
    [stored] = await reviews.for_screening(session, screening_id)
    assert (stored.raw_response, stored.verdict) == (RAW, "faithful")


async def test_reviews_are_listed_by_role_then_attempt(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    await reviews.add(session, record(screening_id, attempt=1))
    await reviews.add(session, record(screening_id, attempt=2, purpose=Purpose.FORMAT_RETRY))
    await reviews.add(session, record(screening_id, role=Role.JUDGE, attempt=1))
    stored = await reviews.for_screening(session, screening_id)
    assert [(r.role, r.attempt, r.purpose) for r in stored] == [
        ("judge", 1, "review"),
        ("translator", 1, "review"),
        ("translator", 2, "format_retry"),
    ]


async def test_a_supplied_review_needs_no_call_metadata(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    minimal = ReviewRecord(
        screening_id=screening_id,
        role="judge",
        attempt=1,
        purpose="review",
        verdict="unclear",
        parse_status="missing",
        parser_version="parser-1",
        raw_response="no verdict here",
        supplied=True,
    )
    assert await reviews.add(session, minimal)
    [stored] = await reviews.for_screening(session, screening_id)
    assert (stored.supplied, stored.usage, stored.messages, stored.model) == (True, {}, None, None)


async def test_the_orm_refuses_to_change_a_review(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    await reviews.add(session, record(screening_id))
    [stored] = await reviews.for_screening(session, screening_id)
    stored.verdict = "mismatch"
    with pytest.raises(ReviewIsAppendOnly):
        await session.flush()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE reviews SET verdict = 'mismatch'",
        "UPDATE reviews SET raw_response = raw_response",
    ],
)
async def test_the_database_refuses_to_change_a_review(
    session: AsyncSession, statement: str
) -> None:
    screening_id = await new_screening_id(session)
    await reviews.add(session, record(screening_id))
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        await session.execute(sa.text(statement))


async def test_the_database_refuses_an_orm_bulk_update(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    await reviews.add(session, record(screening_id))
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        await session.execute(sa.update(Review).values(verdict="mismatch"))


async def test_an_unknown_purpose_is_refused(session: AsyncSession) -> None:
    screening_id = await new_screening_id(session)
    with pytest.raises(sa.exc.StatementError, match="'curiosity' cannot be stored"):
        await reviews.add(session, record(screening_id, purpose="curiosity"))
    # The database's CHECK refuses it too, for a write that bypasses the column type.
    row = {**record(screening_id).row(), "purpose": sa.literal_column("'curiosity'")}
    with pytest.raises(sa.exc.IntegrityError):
        await session.execute(sa.insert(Review).values(**row))


async def test_a_bulk_insert_of_a_stored_attempt_is_refused_on_both_databases(
    session: AsyncSession,
) -> None:
    """SQLite's append-only trigger drops such a row silently; add_many still refuses it."""
    screening_id = await new_screening_id(session)
    await reviews.add_many(session, [record(screening_id)])
    with pytest.raises(sa.exc.IntegrityError):
        await reviews.add_many(session, [record(screening_id)])
