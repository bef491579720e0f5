"""screenings: one pair's run through the pipeline, ending in exactly one outcome."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    JSON,
    CheckConstraint,
    ForeignKey,
    Index,
    String,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.clock import utcnow
from app.db.types import ProviderText, StrEnumType, UTCDateTime
from app.models.base import Base, one_of
from app.models.decision import FINAL_VALUES
from app.vocabulary import (
    LABELS,
    OUTCOMES,
    PANEL_RULES,
    DecisionValue,
    Label,
    Outcome,
    PanelRule,
    Priority,
    ScreeningStatus,
)

if TYPE_CHECKING:
    from app.models.lean_check import LeanCheck
    from app.models.pair import PairRow
    from app.models.review import Review

STATUSES = tuple(s.value for s in ScreeningStatus)
PRIORITIES = tuple(p.value for p in Priority)
DECISIONS = FINAL_VALUES


def new_screening_id() -> str:
    return str(uuid.uuid4())


class Screening(Base):
    __tablename__ = "screenings"
    __table_args__ = (
        # Listing is newest first with a (created_at, id) keyset cursor.
        Index("ix_screenings_created_at_id", "created_at", "id"),
        # A batch's items in submission order (its results are read back by this key).
        UniqueConstraint("batch_id", "batch_index"),
        CheckConstraint(one_of("status", STATUSES), name="status"),
        CheckConstraint(f"outcome IS NULL OR {one_of('outcome', OUTCOMES)}", name="outcome"),
        CheckConstraint(
            f"final_decision IS NULL OR {one_of('final_decision', DECISIONS)}",
            name="final_decision",
        ),
        CheckConstraint(f"label IS NULL OR {one_of('label', LABELS)}", name="label"),
        CheckConstraint(
            f"panel_rule IS NULL OR {one_of('panel_rule', PANEL_RULES)}", name="panel_rule"
        ),
        CheckConstraint(one_of("priority", PRIORITIES), name="priority"),
        # A batch's labelled screenings, read by its calibration.
        Index("ix_screenings_batch_id_label", "batch_id", "label"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_screening_id)
    pair_id: Mapped[int] = mapped_column(ForeignKey("pairs.id"), index=True)
    external_id: Mapped[str | None] = mapped_column(String, index=True)
    batch_id: Mapped[str | None] = mapped_column(String(36), ForeignKey("batches.id"), index=True)
    # The item's position in its batch's request (0-based); None outside a batch.
    batch_index: Mapped[int | None]
    status: Mapped[ScreeningStatus] = mapped_column(
        StrEnumType(ScreeningStatus, 16), index=True, default=ScreeningStatus.QUEUED
    )
    outcome: Mapped[Outcome | None] = mapped_column(StrEnumType(Outcome, 16), index=True)
    reasons: Mapped[list[str]] = mapped_column(JSON, default=list)
    # [{code, message, severity}], the evidence findings the outcome was decided with.
    evidence: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    policy_version: Mapped[str | None] = mapped_column(String(64))
    evidence_version: Mapped[str | None] = mapped_column(String(64))
    confirmations: Mapped[int] = mapped_column(default=0)
    # A panel screening's judges (FAITHSCREEN_JUDGES when it was submitted) and how their
    # votes combine; both None for a screening by the single judge.
    judges: Mapped[list[str] | None] = mapped_column(JSON)
    panel_rule: Mapped[PanelRule | None] = mapped_column(StrEnumType(PanelRule, 16))
    # Why it ended as it did, when a cause (say, a provider failure) is worth a sentence;
    # while it waits, why (a provider asked to wait). May quote a provider: ProviderText.
    error: Mapped[str | None] = mapped_column(ProviderText())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # A person's decision from the review queue (the outcome above is never changed); set
    # by a decision, cleared by a reopen. The full trail is in `decisions`.
    final_decision: Mapped[DecisionValue | None] = mapped_column(StrEnumType(DecisionValue, 16))
    final_decision_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # What the client knows the pair to be, for calibration; read by reports only (never
    # by a prompt, the evidence checks, the policy or the review queue).
    label: Mapped[Label | None] = mapped_column(StrEnumType(Label, 16))
    # How its job is claimed: interactive before batch (docs/api.md, Priorities).
    priority: Mapped[Priority] = mapped_column(
        StrEnumType(Priority, 16), default=Priority.INTERACTIVE, server_default="interactive"
    )
    # The client's slicing tags (validated at intake), [] when none.
    tags: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))

    # Loaded only when asked for (lazy="raise"): async sessions cannot lazy-load.
    pair: Mapped[PairRow] = relationship(lazy="raise")
    # viewonly: reviews are written by `repositories.reviews.add` alone, never through here.
    reviews: Mapped[list[Review]] = relationship(
        lazy="raise", viewonly=True, order_by="[Review.role, Review.judge_name, Review.attempt]"
    )
    # Its Lean check, when a Lean server was asked (written by repositories.lean_checks).
    lean_check: Mapped[LeanCheck | None] = relationship(lazy="raise", viewonly=True)
