"""Re-scoring screenings stored under evidence-4 with evidence-5's new checks (run by
today's code, evidence-8, whose newer checks see none of these pairs), on SQLite and
PostgreSQL. No model is called; both stored readings are faithful under today's parser.

    NARROWER   passed  reals typed `ℕ`                        -> needs_review
    RANGE      passed  `Finset.range n` for a sum from 1 to n -> needs_review
    VACUOUS    passed  `0 < x` and `x < 0`                    -> needs_review
    CLEAN      passed  nothing to find                        (stays passed, restamped)
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.evidence import EVIDENCE_VERSION
from app.vocabulary import Pair
from tests.support.rescoring import (
    applied,
    assert_dry_run_moves_only,
    assert_each_new_finding_stored,
    stored_passed,
)

# miniF2F amc12a_2019_p12 before its fix typed the positive reals `x y : ℕ`.
NARROWER = Pair(
    "Let $x$ and $y$ be positive real numbers with $xy = 64$. Show that $x + y \\geq 16$.",
    "theorem t (x y : ℕ) (h₀ : x * y = 64) : x + y ≥ 16 := by sorry",
)
RANGE = Pair(
    "Show that $\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}$.",
    "theorem t (n : ℕ) : ∑ k ∈ Finset.range n, (k : ℚ) = n * (n + 1) / 2 := by sorry",
)
VACUOUS = Pair(
    "Let 0 < x < 1. Show x^2 < x.", "theorem t (x : ℝ) (h₀ : 0 < x) (h₁ : x < 0) : x ^ 2 < x"
)
CLEAN = Pair(
    "Let $x$ be a real number. Show that $x^2 \\geq 0$.",
    "theorem t (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
)
CASES = {"narrower": NARROWER, "range": RANGE, "vacuous": VACUOUS, "clean": CLEAN}
NEW_CODES = {
    "narrower": "narrower_number_type",
    "range": "range_offset",
    "vacuous": "contradictory_hypotheses",
}


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    return await stored_passed(session_factory, CASES, evidence_version="evidence-4")


async def test_a_dry_run_moves_exactly_the_pairs_the_new_checks_see(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    assert EVIDENCE_VERSION == "evidence-8"
    await assert_dry_run_moves_only(session_factory, ids, list(NEW_CODES), untouched="range")


async def test_applying_stores_each_new_finding_with_its_span(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    await applied(session_factory)
    spans = {"narrower": "x", "range": "Finset.range n", "vacuous": "0"}
    await assert_each_new_finding_stored(session_factory, ids, CASES, NEW_CODES, spans, sole=False)
