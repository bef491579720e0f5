"""What Lean checks saved (issue 34), from the screenings' reasons. Pure.

A screening Lean stopped (`lean_error`, `lean_unavailable`; app/policy/lean.py) asked no
model: at least the translator's and one judge's call were not made (a panel's judges,
confirmations and format retries would have been more), so the count is a floor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from app.policy.reasons import Reason, reason_kind

# The translator's review and one judge's: the fewest calls a screening ever makes.
FEWEST_CALLS = 2


class Reasoned(Protocol):
    @property
    def reasons(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class LeanSaving:
    lean_error: int = 0
    lean_unavailable: int = 0

    def __bool__(self) -> bool:
        return self.stopped > 0

    @property
    def stopped(self) -> int:
        return self.lean_error + self.lean_unavailable

    @property
    def llm_calls_saved_at_least(self) -> int:
        return FEWEST_CALLS * self.stopped


def lean_saving(screenings: Iterable[Reasoned]) -> LeanSaving:
    kinds = [{reason_kind(r) for r in s.reasons if _known(r)} for s in screenings]
    return LeanSaving(
        lean_error=sum(Reason.LEAN_ERROR in k for k in kinds),
        lean_unavailable=sum(Reason.LEAN_UNAVAILABLE in k for k in kinds),
    )


def lean_text(saving: LeanSaving) -> str:
    return (
        f"Lean stopped {saving.stopped} before any model ({saving.lean_error} lean_error, "
        f"{saving.lean_unavailable} lean_unavailable): at least "
        f"{saving.llm_calls_saved_at_least} LLM calls not made"
    )


def _known(reason: str) -> bool:
    try:
        reason_kind(reason)
    except ValueError:
        return False
    return True
