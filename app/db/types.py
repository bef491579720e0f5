"""Column types shared by the models."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import TypeVar

from sqlalchemy import DateTime, String, Text
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from app.outside_text import CUT_MARK, LONE_SURROGATE, without_lone_surrogates


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


# A stored text that begins with ESCAPED holds its value escaped (ProviderText). U+FDD0 is
# a Unicode noncharacter: the standard reserves it for a program's internal use and no
# text meant for people starts with one, so rows written before this type read the same.
ESCAPED = "\ufdd0"
_NUL = "\x00"
_TO_ESCAPE = re.compile("[\\\\\x00\ud800-\udfff]")
_ESCAPE_SEQUENCE = re.compile(r"\\(?:(\\)|(0)|u(d[89a-f][0-9a-f]{2}))|\\")


class NotEscaped(ValueError):
    """A stored text that begins with ESCAPED but is not in the escaped form."""


def escape_text(value: str) -> str:
    """`value` as text every backend can store: itself, or ESCAPED and the value with
    backslash, U+0000 and lone surrogates written as \\\\, \\0 and \\udxxx. Only a value
    that needs it (or begins with ESCAPED) is escaped, so most rows stay readable in SQL."""
    if _NUL not in value and not value.startswith(ESCAPED) and not _has_lone_surrogate(value):
        return value
    return ESCAPED + _TO_ESCAPE.sub(_escape_one, value)


def _has_lone_surrogate(value: str) -> bool:
    return LONE_SURROGATE.search(value) is not None


def _escape_one(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\\":
        return "\\\\"
    return "\\0" if char == _NUL else f"\\u{ord(char):04x}"


def unescape_text(stored: str) -> str:
    """The value `escape_text` stored. A text is read as escaped only when it is exactly
    what `escape_text` writes for what it decodes to; any other (a row written before,
    beginning with U+FDD0 by chance) is its own value."""
    if not stored.startswith(ESCAPED):
        return stored
    try:
        value = _ESCAPE_SEQUENCE.sub(_unescape_one, stored[len(ESCAPED) :])
    except NotEscaped:
        return stored
    return value if escape_text(value) == stored else stored


def _unescape_one(match: re.Match[str]) -> str:
    backslash, nul, surrogate = match.groups()
    if backslash:
        return "\\"
    if nul:
        return _NUL
    if surrogate:
        return chr(int(surrogate, 16))
    raise NotEscaped("a backslash that starts no escape")


def bounded_text(value: str, length: int) -> str:
    """`value` escaped, cut (with CUT_MARK) so that the stored text has at most `length`
    characters: a cut value never equals a shorter one a reader may look for."""
    stored = escape_text(value)
    if len(stored) <= length:
        return stored
    mark = CUT_MARK.format(len(value))
    keep = max(0, length - len(mark))
    while keep > 0 and len(escape_text(value[:keep] + mark)) > length:
        keep -= 1
    return escape_text(value[:keep] + mark)[:length]


class ProviderText(TypeDecorator[str]):
    """A string that came from a provider, stored on every backend whatever it holds.

    PostgreSQL text cannot hold U+0000 and no UTF-8 text can hold a lone surrogate (JSON
    lets a provider send one as a \\ud800 escape); SQLite refuses the surrogate too. Such a
    value is stored escaped (`escape_text`) and read back exactly. With `raw` (the HTTP
    body, kept as received) lone surrogates are kept too; otherwise (text parsed from the
    body and shown in JSON and pages, which cannot carry one) each becomes U+FFFD, and the
    raw body still holds the original escape. The column's DDL is the plain one.
    """

    impl: type[String] = Text
    cache_ok = True

    def __init__(self, *args: object, raw: bool = False) -> None:
        super().__init__(*args)
        self.raw = raw

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if not self.raw:
            value = without_lone_surrogates(value)
        return self.stored(value)

    def stored(self, value: str) -> str:
        return escape_text(value)

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else unescape_text(value)

    @property
    def python_type(self) -> type[str]:
        return str


class ProviderString(ProviderText):
    """ProviderText in a VARCHAR(length) column: a longer value is cut to fit, with a
    mark (`bounded_text`), rather than refused (PostgreSQL) or kept whole (SQLite)."""

    impl = String
    cache_ok = True

    def __init__(self, length: int | None = None) -> None:
        super().__init__(length)
        self.length = length

    def stored(self, value: str) -> str:
        return escape_text(value) if self.length is None else bounded_text(value, self.length)
