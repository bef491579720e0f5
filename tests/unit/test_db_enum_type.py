"""StrEnumType: a vocabulary column stores the word's plain string and loads the member, and
refuses a word outside its vocabulary both ways (on a real SQLite database)."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column
from sqlalchemy.schema import CreateTable

from app.db.types import StrEnumType
from app.vocabulary import Outcome


class Base(DeclarativeBase):
    pass


class Row(Base):
    __tablename__ = "rows"

    id: Mapped[int] = mapped_column(primary_key=True)
    outcome: Mapped[Outcome | None] = mapped_column(StrEnumType(Outcome, 16))


@pytest.fixture
def engine() -> Iterator[sa.Engine]:
    engine = sa.create_engine("sqlite://")
    Base.metadata.create_all(engine)
    yield engine
    engine.dispose()


def stored_text(engine: sa.Engine, row_id: int) -> object:
    with engine.connect() as connection:
        return connection.exec_driver_sql(
            "SELECT outcome FROM rows WHERE id = ?", (row_id,)
        ).scalar_one()


def loaded(engine: sa.Engine, row_id: int) -> Outcome | None:
    with Session(engine) as session:
        return session.get_one(Row, row_id).outcome


def test_a_member_round_trips_stored_as_its_plain_value(engine: sa.Engine) -> None:
    with Session(engine) as session:
        session.add(Row(id=1, outcome=Outcome.NEEDS_REVIEW))
        session.commit()
    text = stored_text(engine, 1)
    assert text == "needs_review"
    assert type(text) is str
    value = loaded(engine, 1)
    assert value is Outcome.NEEDS_REVIEW
    assert type(value) is Outcome


def test_a_core_select_loads_members_too(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(sa.insert(Row), [{"id": 1, "outcome": Outcome.PASSED}])
        found = connection.execute(sa.select(Row.outcome)).scalar_one()
    assert found is Outcome.PASSED


def test_null_stays_null(engine: sa.Engine) -> None:
    with Session(engine) as session:
        session.add(Row(id=1, outcome=None))
        session.commit()
    assert stored_text(engine, 1) is None
    assert loaded(engine, 1) is None


def test_a_plain_string_that_is_a_member_value_binds(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.execute(sa.insert(Row), [{"id": 1, "outcome": "flagged"}])
        matched = connection.execute(sa.select(Row.id).where(Row.outcome == "flagged")).scalar_one()
    assert matched == 1
    assert loaded(engine, 1) is Outcome.FLAGGED


def test_binding_a_word_outside_the_vocabulary_fails(engine: sa.Engine) -> None:
    with Session(engine) as session:
        session.add(Row(id=1, outcome="certified"))  # type: ignore[arg-type]
        with pytest.raises(
            StatementError, match="'certified' cannot be stored in a column of Outcome"
        ):
            session.commit()
    with engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM rows").scalar_one() == 0


def test_a_member_of_another_vocabulary_with_an_unknown_value_fails(engine: sa.Engine) -> None:
    class Other(StrEnum):
        MAYBE = "maybe"

    with engine.begin() as connection, pytest.raises(StatementError, match="'maybe'"):
        connection.execute(sa.insert(Row), [{"id": 1, "outcome": Other.MAYBE}])


def test_an_invalid_stored_string_raises_clearly_on_load(engine: sa.Engine) -> None:
    with engine.begin() as connection:
        connection.exec_driver_sql("INSERT INTO rows (id, outcome) VALUES (1, 'certified')")
    with pytest.raises(ValueError, match="'certified' was read from a column of Outcome") as raised:
        loaded(engine, 1)
    assert "passed, flagged, needs_review" in str(raised.value)


def test_the_ddl_is_that_of_a_plain_string_column() -> None:
    for dialect in (sqlite.dialect(), postgresql.dialect()):
        ddl = str(CreateTable(Row.__table__).compile(dialect=dialect))  # type: ignore[arg-type]
        assert "outcome VARCHAR(16)" in ddl
