"""decisions: what a person decided about a queue item, who, when, why. Append-only.

The trail of an item is its rows in id order: a `decision` (faithful, mismatch or unsure),
maybe a `withdrawal` of it by the same person inside the undo window, a `reopen` by an
admin, an admin's `adjudication` of a disputed double review... Changes and deletions are
refused twice: here, for anything going through the ORM, and by database triggers (see the
0003, 0006 and 0009 migrations) for everything else.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, CheckConstraint, ForeignKey, String, Text, event, false, text
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Mapped, Mapper, mapped_column

from app.clock import utcnow
from app.db.types import StrEnumType, UTCDateTime
from app.models.api_key import AccessRole
from app.models.base import Base, one_of
from app.vocabulary import DecisionKind, DecisionValue

# The defects a person may name on a decision (not a screening's free-form `tags`).
DEFECTS = (
    "dropped_hypothesis",
    "extra_hypothesis",
    "weakened_conclusion",
    "strengthened_conclusion",
    "wrong_type",
    "wrong_constant",
    "wrong_quantifier",
    "wrong_answer",
    "vacuous",
    "other",
)

KINDS = tuple(k.value for k in DecisionKind)
VALUES = tuple(v.value for v in DecisionValue)
# What can resolve a pair (and stand as a screening's final decision): not `unsure`.
FINAL_VALUES = (DecisionValue.FAITHFUL.value, DecisionValue.MISMATCH.value)
# Decision and adjudication rows carry a value; reopen and withdrawal rows carry none, and
# only a withdrawal names the decision it withdraws.
VALUE_MATCHES_KIND = (
    "(kind IN ('decision', 'adjudication') AND decision IS NOT NULL) "
    "OR (kind IN ('reopen', 'withdrawal') AND decision IS NULL)"
)
WITHDRAWS_MATCHES_KIND = "(kind = 'withdrawal') = (withdraws_id IS NOT NULL)"


class DecisionIsAppendOnly(Exception):
    """Something tried to change or delete a stored decision."""


class Decision(Base):
    __tablename__ = "decisions"
    __table_args__ = (
        CheckConstraint(one_of("kind", KINDS), name="kind"),
        CheckConstraint(f"decision IS NULL OR {one_of('decision', VALUES)}", name="decision"),
        CheckConstraint(VALUE_MATCHES_KIND, name="value_matches_kind"),
        CheckConstraint(WITHDRAWS_MATCHES_KIND, name="withdraws_matches_kind"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    queue_item_id: Mapped[int] = mapped_column(ForeignKey("queue_items.id"), index=True)
    screening_id: Mapped[str] = mapped_column(ForeignKey("screenings.id"), index=True)
    kind: Mapped[DecisionKind] = mapped_column(StrEnumType(DecisionKind, 16))
    decision: Mapped[DecisionValue | None] = mapped_column(StrEnumType(DecisionValue, 16))
    note: Mapped[str] = mapped_column(Text, default="")
    # Names from DEFECTS (a list, possibly empty), on decision and adjudication rows.
    defects: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))
    # Whether the person decided without seeing the models' verdicts (a blind audit).
    blind: Mapped[bool] = mapped_column(default=False, server_default=false())
    # When the decider's claim on the item began (None without one, e.g. an adjudication).
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When the decider first opened the item (models.review_thread.ItemOpening), copied at
    # the decision: their time on it. None when they never opened it (a decision over the
    # API without reading the item, or made before openings were recorded).
    opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # On a withdrawal: the decision it takes back.
    withdraws_id: Mapped[int | None] = mapped_column(ForeignKey("decisions.id"))
    # The acting key's name and access role at the time.
    actor: Mapped[str] = mapped_column(String(100))
    actor_role: Mapped[AccessRole] = mapped_column(StrEnumType(AccessRole, 16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


@event.listens_for(Decision, "before_update")
def _refuse_update(_mapper: Mapper[Decision], _connection: Connection, row: Decision) -> None:
    raise DecisionIsAppendOnly(f"decision {row.id} is append-only and cannot be changed")


@event.listens_for(Decision, "before_delete")
def _refuse_delete(_mapper: Mapper[Decision], _connection: Connection, row: Decision) -> None:
    raise DecisionIsAppendOnly(f"decision {row.id} is append-only and cannot be deleted")
