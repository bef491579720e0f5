"""Append-only records refuse, in the database itself, every statement that would rewrite
or remove them: UPDATE and DELETE on both databases, INSERT OR REPLACE on SQLite, TRUNCATE
on PostgreSQL. Raw SQL throughout: the ORM's own refusals have tests of their own."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncSession

from app.models import Decision, QueueItem, ReadingRow, Rescore, Review, RulingRow
from app.models.base import Base
from app.repositories import pairs, screenings
from app.vocabulary import Pair

# Per table: a column and a value that would rewrite the stored row.
REWRITES: dict[str, tuple[str, str]] = {
    "reviews": ("verdict", "mismatch"),
    "decisions": ("decision", "faithful"),
    "readings": ("verdict", "faithful"),
    "rulings": ("outcome", "passed"),
}
MODELS: dict[str, type[Base]] = {
    "reviews": Review,
    "decisions": Decision,
    "readings": ReadingRow,
    "rulings": RulingRow,
}
TABLES = list(REWRITES)


async def seed(session: AsyncSession) -> dict[str, int]:
    """One row in each append-only table; the id of each."""
    pair = await pairs.get_or_create(session, Pair("informal", "theorem t : 1 = 1 := rfl"))
    screening = await screenings.add(
        session, pair_id=pair.id, external_id=None, batch_id=None, confirmations=0
    )
    review = Review(
        screening_id=screening.id, role="translator", attempt=1, purpose="review",
        verdict="faithful", parse_status="ok", parser_version="contract-1",
    )  # fmt: skip
    item = QueueItem(screening_id=screening.id, reasons=["judge_unclear"])
    rescore = Rescore(
        id="00000000-0000-4000-8000-00000000a0a0", actor="test", scope={},
        parser_version="contract-1", policy_version="policy-1", evidence_version="evidence-1",
        summary={},
    )  # fmt: skip
    session.add_all([review, item, rescore])
    await session.flush()
    decision = Decision(
        queue_item_id=item.id, screening_id=screening.id, kind="decision",
        decision="mismatch", note="drops n > 0", actor="ada", actor_role="reviewer",
    )  # fmt: skip
    reading = ReadingRow(
        review_id=review.id, screening_id=screening.id, rescore_id=rescore.id,
        verdict="mismatch", parse_status="ok", parser_version="contract-2",
    )  # fmt: skip
    ruling = RulingRow(
        screening_id=screening.id, rescore_id=rescore.id, outcome="flagged", reasons=[],
        evidence=[], parser_version="contract-2", policy_version="policy-1",
        evidence_version="evidence-1",
    )  # fmt: skip
    session.add_all([decision, reading, ruling])
    await session.commit()
    return {"reviews": review.id, "decisions": decision.id, "readings": reading.id} | {
        "rulings": ruling.id
    }


async def stored(session: AsyncSession, table: str, row_id: int) -> dict[str, Any] | None:
    result = await session.execute(sa.text(f"SELECT * FROM {table} WHERE id = :id"), {"id": row_id})
    row = result.mappings().first()
    return None if row is None else dict(row)


def dialect(session: AsyncSession) -> str:
    return session.get_bind().dialect.name


def columns(table: str) -> list[str]:
    return [column.name for column in MODELS[table].__table__.columns]


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize(
    "statement", ["UPDATE {table} SET {column} = '{value}'", "DELETE FROM {table}"]
)
async def test_update_and_delete_are_refused(
    session: AsyncSession, table: str, statement: str
) -> None:
    ids = await seed(session)
    before = await stored(session, table, ids[table])
    column, value = REWRITES[table]
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        await session.execute(sa.text(statement.format(table=table, column=column, value=value)))
    await session.rollback()
    assert await stored(session, table, ids[table]) == before


@pytest.mark.parametrize("table", TABLES)
async def test_sqlite_insert_or_replace_over_a_stored_row_is_refused(
    session: AsyncSession, table: str
) -> None:
    if dialect(session) != "sqlite":
        pytest.skip("INSERT OR REPLACE is SQLite's")
    ids = await seed(session)
    before = await stored(session, table, ids[table])
    column, value = REWRITES[table]
    names = columns(table)
    chosen = ", ".join(f"'{value}'" if name == column else name for name in names)
    replace = f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) SELECT {chosen} FROM {table}"
    with pytest.raises(sa.exc.DBAPIError, match="append-only"):
        await session.execute(sa.text(replace + " WHERE id = :id"), {"id": ids[table]})
    await session.rollback()
    assert await stored(session, table, ids[table]) == before


async def test_sqlite_insert_or_replace_by_a_reviews_unique_key_keeps_the_stored_review(
    session: AsyncSession,
) -> None:
    if dialect(session) != "sqlite":
        pytest.skip("INSERT OR REPLACE is SQLite's")
    ids = await seed(session)
    before = await stored(session, "reviews", ids["reviews"])
    names = [name for name in columns("reviews") if name != "id"]
    chosen = ", ".join("'mismatch'" if name == "verdict" else name for name in names)
    await session.execute(
        sa.text(f"INSERT OR REPLACE INTO reviews ({', '.join(names)}) SELECT {chosen} FROM reviews")
    )
    await session.commit()
    assert await stored(session, "reviews", ids["reviews"]) == before
    count = await session.execute(sa.text("SELECT count(*) FROM reviews"))
    assert count.scalar_one() == 1


@pytest.mark.parametrize("table", TABLES)
async def test_postgres_truncate_is_refused(session: AsyncSession, table: str) -> None:
    if dialect(session) != "postgresql":
        pytest.skip("TRUNCATE triggers are PostgreSQL's")
    ids = await seed(session)
    # A plain TRUNCATE of reviews is refused by readings' foreign key before any trigger.
    with pytest.raises(sa.exc.DBAPIError, match=r"append-only|referenced in a foreign key"):
        await session.execute(sa.text(f"TRUNCATE {table}"))
    await session.rollback()
    for statement in (f"TRUNCATE {table} CASCADE", "TRUNCATE screenings CASCADE"):
        with pytest.raises(sa.exc.DBAPIError, match="append-only"):
            await session.execute(sa.text(statement))
        await session.rollback()
    assert await stored(session, table, ids[table]) is not None
