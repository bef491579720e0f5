"""What a re-scoring run reads of the stored screenings, as plain values, and what its
writes read of a change. Defined here, below app/rescore, so the replay and the diff (pure)
and the queries (rescores.py) share them without app/repositories importing app/rescore.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from app.contract.reading import Reading
from app.vocabulary import Purpose, ReplyFormat, Role


@dataclass(frozen=True, slots=True)
class CurrentState:
    """A screening as stored now: what a replay is compared with."""

    screening_id: str
    outcome: str
    reasons: tuple[str, ...]
    evidence: tuple[Mapping[str, str], ...]
    policy_version: str | None
    evidence_version: str | None
    # When the row last changed: a write succeeds only if it is still this.
    updated_at: datetime
    # The client's label, when it gave one: the run's calibration before and after.
    label: str | None = None


@dataclass(frozen=True, slots=True)
class StoredCall:
    """What a replay needs of one stored review."""

    review_id: int
    role: Role
    attempt: int
    purpose: Purpose
    raw_response: str | None
    finish_reason: str | None
    # The reading the screening's current outcome was decided with.
    reading: Reading
    # A reply the client supplied: there was no provider to ask again.
    supplied: bool = False
    # Which judge made it (`judge` for the single judge; "" for the translator).
    judge_name: str = ""
    # As recorded when the call was made: a replay never reads today's setting.
    evidential: bool = True
    # The reply format it was asked in, read by that format's reader (app/contract/formats.py).
    reply_format: ReplyFormat = ReplyFormat.TEXT
    # The raw HTTP body: the reply's tool calls are read from it, whatever its format.
    raw_body: str | None = None


class NewRuling(Protocol):
    """What a write reads of a replayed ruling (a pipeline.ruling.ScreeningRuling): the
    columns its outcome sets (its OutcomeFields)."""

    def outcome_fields(self) -> Mapping[str, object]: ...


class ChangeToApply(Protocol):
    """What a write reads of one screening's change (a rescore.diff.Change)."""

    @property
    def current(self) -> CurrentState: ...
    @property
    def ruling(self) -> NewRuling: ...
    @property
    def parser_version_before(self) -> str: ...
    @property
    def parser_version(self) -> str: ...
    @property
    def readings(self) -> Mapping[int, tuple[Reading, Reading]]: ...
