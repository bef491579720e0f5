"""Column types shared by the models."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import DateTime, String
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend.

    PostgreSQL stores `timestamptz`. SQLite has no time zone type, so the value is stored
    as naive UTC text (fixed-width, so text order is time order) and read back as UTC.
    Naive datetimes are refused on the way in: their meaning depends on the machine.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError(f"naive datetime {value!r}: pass a timezone-aware UTC datetime")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


E = TypeVar("E", bound=StrEnum)


class StrEnumType(TypeDecorator[E]):
    """A vocabulary word (a member of `enum_cls`) stored as its plain string value.

    The column stays `VARCHAR(length)` (its CHECK constraint, where it has one, names the
    allowed words), so the DDL is that of a string column; what changes is that rows load
    as members, and a word outside the vocabulary is refused on the way in and on the way
    out instead of travelling on as a bare string. A plain string that is a member's value
    is accepted on bind, for code and SQL expressions that hold the value.
    """

    impl = String
    cache_ok = True

    def __init__(self, enum_cls: type[E], length: int) -> None:
        super().__init__(length)
        self.enum_cls = enum_cls

    def process_bind_param(self, value: E | str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return self.word(value, "cannot be stored in").value

    def process_result_value(self, value: str | None, dialect: Dialect) -> E | None:
        if value is None:
            return None
        return self.word(value, "was read from")

    def word(self, value: str, where: str) -> E:
        try:
            return self.enum_cls(value)
        except ValueError:
            allowed = ", ".join(member.value for member in self.enum_cls)
            raise ValueError(
                f"{value!r} {where} a column of {self.enum_cls.__name__}: not one of {allowed}"
            ) from None

    @property
    def python_type(self) -> type[E]:
        return self.enum_cls
