"""reviews: one LLM call's record. Append-only: a row, once written, is never changed.

Changes are refused twice: here, for anything going through the ORM, and by a database
trigger (see the initial migration) for everything else.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    ForeignKey,
    String,
    UniqueConstraint,
    event,
    true,
)
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.clock import utcnow
from app.db.types import ProviderString, ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.vocabulary import ParseStatus, Purpose, ReplyFormat, Role, Verdict

PURPOSES = tuple(p.value for p in Purpose)
# A translator review's `judge_name`: it names no judge (the column is part of a unique
# key, which NULL would not keep).
NO_JUDGE = ""


class ReviewIsAppendOnly(Exception):
    """Something tried to change a stored review."""


class Review(Base):
    __tablename__ = "reviews"
    __table_args__ = (
        # A job re-run after a crash can never store a second review for one attempt of
        # one judge (or of the translator). Its index also serves lookups by screening_id.
        UniqueConstraint("screening_id", "role", "judge_name", "attempt"),
        CheckConstraint(one_of("purpose", PURPOSES), name="purpose"),
        # Every judge review names its judge; no translator review does.
        CheckConstraint(
            f"(role = '{Role.JUDGE.value}') = (judge_name <> '{NO_JUDGE}')", name="judge_name"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"))
    role: Mapped[Role] = mapped_column(StrEnumType(Role, 16))
    # Which judge: a panel judge's name (FAITHSCREEN_JUDGES), `judge` for the single judge,
    # NO_JUDGE for the translator.
    judge_name: Mapped[str] = mapped_column(String(32), default=NO_JUDGE, server_default=NO_JUDGE)
    # 1, 2, 3... per screening, role and judge, across purposes.
    attempt: Mapped[int]
    purpose: Mapped[Purpose] = mapped_column(StrEnumType(Purpose, 16))
    prompt_version: Mapped[str | None] = mapped_column(String(64))
    # The exact messages sent, and their digest.
    messages: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    messages_sha256: Mapped[str | None] = mapped_column(String(64))
    # Byte-for-byte the reply content, and the raw HTTP body it came in. Every string a
    # provider sent is a ProviderText: stored whatever it holds (U+0000, a lone surrogate),
    # read back exactly. The reply and the body keep lone surrogates (a re-score reads what
    # was sent); a field parsed from them has U+FFFD instead (what is shown replaces them).
    raw_response: Mapped[str | None] = mapped_column(ProviderText(raw=True))
    raw_body: Mapped[str | None] = mapped_column(ProviderText(raw=True))
    verdict: Mapped[Verdict] = mapped_column(StrEnumType(Verdict, 16))
    parse_status: Mapped[ParseStatus] = mapped_column(StrEnumType(ParseStatus, 32))
    back_translation: Mapped[str | None] = mapped_column(ProviderText())
    issues: Mapped[str | None] = mapped_column(ProviderText())
    # Longer than 64 characters: cut, with a mark (the raw body has it whole).
    finish_reason: Mapped[str | None] = mapped_column(ProviderString(64))
    refusal: Mapped[str | None] = mapped_column(ProviderText())
    model: Mapped[str | None] = mapped_column(ProviderString())
    usage: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    http_status: Mapped[int | None]
    latency_ms: Mapped[int | None]
    error: Mapped[str | None] = mapped_column(ProviderText())
    parser_version: Mapped[str] = mapped_column(String(64))
    # True when the client supplied the reply instead of a provider.
    supplied: Mapped[bool] = mapped_column(default=False)
    max_tokens: Mapped[int | None]
    # The model was marked evidential (FAITHSCREEN_*_EVIDENTIAL) when this call was made:
    # False keeps its FAITHFUL from counting towards a pass, now and in every re-score.
    # Reviews stored before it existed were all evidential (there was no other kind).
    evidential: Mapped[bool] = mapped_column(default=True, server_default=true())
    # The reply format the call asked for (FAITHSCREEN_*_REPLY_FORMAT; a supplied reply:
    # text), read by that format's reader, whose version is `parser_version` (contract-4,
    # tool-1, json-1); a re-score reads it with the same format's reader. Reviews stored
    # before it existed were all read as text. `grammar_version`: the grammar decoded by
    # (grammar-1), for `grammar` only.
    reply_format: Mapped[ReplyFormat] = mapped_column(
        StrEnumType(ReplyFormat, 16),
        default=ReplyFormat.TEXT,
        server_default=ReplyFormat.TEXT.value,
    )
    grammar_version: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


@event.listens_for(Review, "before_update")
def _refuse_update(_mapper: Mapper[Review], _connection: Connection, review: Review) -> None:
    raise ReviewIsAppendOnly(f"review {review.id} is append-only and cannot be changed")
