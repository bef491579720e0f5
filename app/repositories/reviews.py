"""Reviews: appended once per (screening, role, judge, attempt), read back in order. There is no
update path: the ORM model and a database trigger both refuse to change a stored review."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from sqlalchemy import Insert, Table, insert, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.review import NO_JUDGE, Review
from app.repositories.conflicts import insert_unless_exists
from app.vocabulary import SINGLE_JUDGE, ParseStatus, Purpose, ReplyFormat, Role, Verdict

UNIQUE_ATTEMPT = ("screening_id", "role", "judge_name", "attempt")
_LARGEST_ID = 2**31 - 1  # reviews.id is an INTEGER (32 bits on PostgreSQL)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewRecord:
    """Everything a review row holds but its id and creation time (see models/review.py)."""

    screening_id: str
    role: Role
    attempt: int
    purpose: Purpose
    verdict: Verdict
    parse_status: ParseStatus
    parser_version: str
    supplied: bool = False
    prompt_version: str | None = None
    messages: Sequence[Mapping[str, Any]] | None = None
    messages_sha256: str | None = None
    raw_response: str | None = None
    raw_body: str | None = None
    back_translation: str | None = None
    issues: str | None = None
    finish_reason: str | None = None
    refusal: str | None = None
    model: str | None = None
    usage: Mapping[str, Any] = field(default_factory=dict)
    http_status: int | None = None
    latency_ms: int | None = None
    error: str | None = None
    max_tokens: int | None = None
    # The judge's name; None: the single judge for a judge review, none for the translator.
    judge_name: str | None = None
    # The provider's FAITHSCREEN_*_EVIDENTIAL when the call was made (supplied: True).
    evidential: bool = True
    # The reply format asked (FAITHSCREEN_*_REPLY_FORMAT; supplied: text) and, for
    # `grammar`, the grammar's version. `parser_version` names the reader that read it.
    reply_format: ReplyFormat = ReplyFormat.TEXT
    grammar_version: str | None = None

    @property
    def judge(self) -> str:
        """The judge_name stored: NO_JUDGE for the translator."""
        if self.judge_name is not None:
            return self.judge_name
        return SINGLE_JUDGE if self.role == Role.JUDGE else NO_JUDGE

    def row(self) -> dict[str, Any]:
        """Column values, as the insert statements bind them."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["judge_name"] = self.judge
        if self.messages is not None:
            values["messages"] = [dict(message) for message in self.messages]
        values["usage"] = dict(self.usage)
        return values


async def add(session: AsyncSession, record: ReviewRecord) -> bool:
    """Store `record`; False (and nothing changed) if that attempt is already stored."""
    return await insert_unless_exists(session, Review, record.row(), UNIQUE_ATTEMPT)


async def for_screening(session: AsyncSession, screening_id: str) -> list[Review]:
    statement = (
        select(Review)
        .where(Review.screening_id == screening_id)
        .order_by(Review.role, Review.judge_name, Review.attempt)
    )
    return list((await session.execute(statement)).scalars())


@dataclass(frozen=True, slots=True)
class RawReply:
    """What the raw endpoint serves of one review: `text`, whole and as stored, and
    whether it is the provider's HTTP body (a `tool` reply: the model wrote the call's
    arguments, which only the body holds) rather than the message content."""

    text: str
    is_body: bool


async def raw_reply(session: AsyncSession, screening_id: str, review_id: int) -> RawReply | None:
    """One review's provider text exactly as stored: for a reply asked as a tool call, the
    raw body (its tool calls' arguments byte for byte, the content beside them); for any
    other, the content. None when this screening has no such review or the call returned
    nothing (it failed)."""
    if not 1 <= review_id <= _LARGEST_ID:
        return None  # no such row, and PostgreSQL refuses to compare its INTEGER with it
    statement = select(
        Review.raw_response, Review.raw_body, Review.reply_format, Review.supplied, Review.error
    ).where(Review.id == review_id, Review.screening_id == screening_id)
    row = (await session.execute(statement)).one_or_none()
    if row is None:
        return None
    content, body, reply_format, supplied, error = row
    # A failed call's body (an error page, a cut body) is no reply: 404 as for text.
    if reply_format is ReplyFormat.TOOL and not supplied and error is None and body is not None:
        return RawReply(body, is_body=True)
    return None if content is None else RawReply(content, is_body=False)


# ---- Bulk, for batches ---------------------------------------------------------------------


async def add_many(session: AsyncSession, records: Sequence[ReviewRecord]) -> None:
    """Insert reviews of new screenings with one executemany. Unlike `add`, a stored
    attempt is not skipped but refused (IntegrityError): new screenings have none. On
    SQLite the append-only trigger drops such a row silently, so the ids coming back are
    counted to refuse it there too."""
    if records:
        table = cast(Table, Review.__table__)
        statement = insert(table).returning(table.c.id)
        stored = (await session.execute(statement, [r.row() for r in records])).all()
        if len(stored) != len(records):
            refused = Exception(f"{len(records) - len(stored)} attempts are already stored")
            raise IntegrityError("INSERT INTO reviews", None, refused)


async def add_many_unless_stored(session: AsyncSession, records: Sequence[ReviewRecord]) -> None:
    """`add` for many records in one executemany: an attempt already stored is skipped
    (a worker whose lease lapsed may race the one that took its job over)."""
    if records:
        await session.execute(_insert_unless_stored(session), [r.row() for r in records])


def _insert_unless_stored(session: AsyncSession) -> Insert:
    dialect = session.get_bind().dialect.name
    insert_of = postgresql.insert if dialect == "postgresql" else sqlite.insert
    table = cast(Table, Review.__table__)
    return insert_of(table).on_conflict_do_nothing(index_elements=list(UNIQUE_ATTEMPT))


async def for_screenings(session: AsyncSession, screening_ids: Sequence[str]) -> list[Review]:
    """The reviews of these screenings, in one query, ordered by screening, role, judge,
    attempt."""
    if not screening_ids:
        return []
    statement = (
        select(Review)
        .where(Review.screening_id.in_(screening_ids))
        .order_by(Review.screening_id, Review.role, Review.judge_name, Review.attempt)
    )
    return list((await session.execute(statement)).scalars())
