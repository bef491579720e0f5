"""Re-scoring screenings stored under evidence-6 with evidence-7's `bidi_control`, on SQLite
and PostgreSQL. No model is called; both stored readings are faithful under today's parser.

    OVERRIDE  passed  U+202E RLO in the Lean: shown `b < a`, stored `a < b`  -> needs_review
    ISOLATE   passed  U+2067 RLI ... U+2069 PDI around a hypothesis          -> needs_review
    MARK      passed  U+200F RLM before `12 - 34` (shown `34 - 12`)          -> needs_review
    CLEAN     passed  nothing to find                                (stays passed, restamped)
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.evidence import EVIDENCE_VERSION
from app.vocabulary import Pair
from tests.support.rescoring import (
    applied,
    assert_dry_run_moves_only,
    assert_each_new_finding_stored,
    stored,
    stored_passed,
)

OVERRIDE = Pair(
    "Show that a < b for all natural numbers a < b.",
    "theorem t (a b : ℕ) (h : a < b) : \u202eb < a\u202c := by sorry",
)
ISOLATE = Pair(
    "Let $x$ be positive. Show that $x^2 > 0$.",
    "theorem t (x : ℝ) \u2067(h : 0 < x)\u2069 : x ^ 2 > 0 := by sorry",
)
MARK = Pair(
    "Show that 12 - 34 = -22.",
    "theorem t : (\u200f12 - 34 : ℤ) = -22 := by norm_num",
)
CLEAN = Pair(
    "Let $x$ be a real number. Show that $x^2 \\geq 0$.",
    "theorem t (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
)
CASES = {"override": OVERRIDE, "isolate": ISOLATE, "mark": MARK, "clean": CLEAN}
NEW_CODES = dict.fromkeys(("override", "isolate", "mark"), "bidi_control")
# Each finding marks the first control of its field, the one character itself.
SPANS = {"override": "\u202e", "isolate": "\u2067", "mark": "\u200f"}


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    return await stored_passed(session_factory, CASES, evidence_version="evidence-6")


async def test_a_dry_run_moves_exactly_the_pairs_holding_a_control(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    assert EVIDENCE_VERSION == "evidence-8"
    await assert_dry_run_moves_only(session_factory, ids, list(NEW_CODES), untouched="override")


async def test_applying_no_longer_passes_them_and_stores_where_each_control_is(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    await applied(session_factory)
    # The override and the isolate pairs hold two kinds of control each: one finding each.
    await assert_each_new_finding_stored(session_factory, ids, CASES, NEW_CODES, SPANS, sole=False)
    override = await stored(session_factory, ids["override"])
    assert [f["message"].split(" (")[0] for f in override.evidence] == [
        "the formal text holds U+202E RIGHT-TO-LEFT OVERRIDE",
        "the formal text holds U+202C POP DIRECTIONAL FORMATTING",
    ]
