"""What `screen_pair` and `get_screening` answer an agent: the screening cut to what it
acts on, and one summary line saying what to do next."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from app.mcp.explain import UnknownReason, explain_reason
from faithscreen_client import Evidence, Review, Screening

DONE = "done"


class RoleReading(BaseModel):
    """The last reply of one role (of one panel judge)."""

    role: str = Field(description="translator or judge.")
    judge: str | None = Field(
        default=None, description="A panel judge's name, `judge` for the single judge."
    )
    verdict: str = Field(description="faithful, mismatch or unclear.")
    parse_status: str = Field(description="`ok`: the verdict is the model's word.")
    issues: str | None


class ScreeningResult(BaseModel):
    id: str
    status: str = Field(description="queued, running or done.")
    outcome: str | None = Field(
        description="passed, flagged or needs_review once done. Passing is evidence, "
        "never certification."
    )
    reasons: list[str] = Field(description="Why it did not pass (explain_reason explains each).")
    roles: list[RoleReading]
    back_translation: str | None = Field(description="The translator's reading of the Lean.")
    evidence: list[Evidence] = Field(description="Deterministic findings about the pair.")
    summary: str = Field(description="One line: what the outcome means and what to do.")


def screening_result(screening: Screening, waited: float | None = None) -> ScreeningResult:
    roles = last_readings(screening.reviews)
    translator = next((r for r in reversed(screening.reviews) if r.role == "translator"), None)
    return ScreeningResult(
        id=screening.id,
        status=screening.status,
        outcome=screening.outcome,
        reasons=list(screening.reasons or []),
        roles=roles,
        back_translation=translator.back_translation if translator else None,
        evidence=screening.evidence,
        summary=summary(screening, waited),
    )


def last_readings(reviews: Sequence[Review]) -> list[RoleReading]:
    """Per role (and panel judge), its highest attempt: the reply the policy read last."""
    last: dict[tuple[str, str | None], Review] = {}
    for review in reviews:
        key = (review.role, review.judge_name)
        if key not in last or review.attempt >= last[key].attempt:
            last[key] = review
    return [
        RoleReading(
            role=role,
            judge=judge,
            verdict=review.verdict,
            parse_status=review.parse_status,
            issues=review.issues,
        )
        # The translator first, then the judges in name order.
        for (role, judge), review in sorted(last.items(), key=_role_order)
    ]


def _role_order(entry: tuple[tuple[str, str | None], Review]) -> tuple[bool, str]:
    (role, judge), _ = entry
    return role != "translator", judge or ""


def summary(screening: Screening, waited: float | None) -> str:
    if screening.status != DONE:
        after = f" after {waited:g} s" if waited is not None else ""
        return (
            f"{screening.status}: not done{after}; call get_screening with id "
            f"{screening.id} to read its outcome."
        )
    if screening.outcome == "passed":
        return (
            "passed: both reviewers read the Lean statement as faithful and no evidence "
            "check objected; passing is evidence, not proof."
        )
    reasons = list(screening.reasons or [])
    why = _meaning(reasons[0]) if reasons else "no reason recorded."
    todo = {
        "flagged": "Fix the Lean statement (see issues and evidence) and screen it again.",
        "needs_review": "No verdict to act on: a person should look, or screen it again.",
    }.get(str(screening.outcome), "")
    return f"{screening.outcome} ({', '.join(reasons)}): {why} {todo}".strip()


def _meaning(code: str) -> str:
    try:
        meaning = explain_reason(code)
    except UnknownReason:
        return f"{code}."
    extra = f" ({meaning.qualifier_meaning})" if meaning.qualifier_meaning else ""
    return meaning.meaning.rstrip(".") + extra + "."
