"""A person's choice on a queue item, checked before the state machine
(app/review_queue/transitions.py) hears of it: the decision, a note, and defects from the
one vocabulary, with the 422s that say what is missing. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from app.errors import AppError
from app.models.decision import DEFECTS
from app.vocabulary import DecisionValue


@dataclass(frozen=True, slots=True)
class Choice:
    """What a person decided, checked: defects from DEFECTS, in its order, once each."""

    decision: DecisionValue
    note: str = ""
    defects: tuple[str, ...] = ()


def choose(decision: DecisionValue, note: str = "", defects: Iterable[str] = ()) -> Choice:
    """The checked choice, or AppError 422: `unknown_defect` (listing the allowed ones),
    `defects_need_mismatch` (faithful with defects), `note_or_defects_required` (a mismatch
    that says neither why nor what), `note_required` (unsure without a note)."""
    named = list(defects)
    unknown = [d for d in named if d not in DEFECTS]
    if unknown:
        raise AppError(
            422,
            "unknown_defect",
            f"unknown defect {', '.join(repr(d) for d in unknown)}: "
            f"defects are {', '.join(DEFECTS)}",
            extra={"allowed": list(DEFECTS)},
        )
    chosen = Choice(decision, note, tuple(d for d in DEFECTS if d in named))
    _require_reasons(chosen)
    return chosen


def _require_reasons(choice: Choice) -> None:
    said = bool(choice.note.strip())
    if choice.decision is DecisionValue.FAITHFUL and choice.defects:
        raise AppError(
            422,
            "defects_need_mismatch",
            "defects name what is wrong with a pair: decide `mismatch` (or `unsure`), "
            "or send no defects with `faithful`",
        )
    if choice.decision is DecisionValue.MISMATCH and not (said or choice.defects):
        raise AppError(
            422,
            "note_or_defects_required",
            "a mismatch needs a note or at least one defect saying what is wrong",
        )
    if choice.decision is DecisionValue.UNSURE and not said:
        raise AppError(422, "note_required", "`unsure` needs a note saying what you could not tell")
