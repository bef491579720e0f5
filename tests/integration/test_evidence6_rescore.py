"""Re-scoring screenings stored under evidence-5 with evidence-6's new checks (run by
today's code, evidence-8, whose newer checks see none of these pairs), on SQLite and
PostgreSQL. No model is called; both stored readings are faithful under today's parser.

    UNUSED      passed  `b` declared, never used              -> needs_review
    IFF         passed  `h → A ↔ B` unbracketed               -> needs_review
    DENOMINATOR passed  `(1 : ℝ) / n` with nothing on `n`     -> needs_review
    CLEAN       passed  nothing to find                        (stays passed, restamped)
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

# PutnamBench putnam_2010_a3 before a414636 dropped the `b` of `a h_x + b h_y`.
UNUSED = Pair(
    "Suppose $h = a h_x + b h_y$ for some constants $a, b$. Show that $h = 0$.",
    "theorem t (h : ℝ → ℝ) (a b : ℝ) (H : ∀ x, h x = a * deriv h x) : h = 0 := by sorry",
)
# PutnamBench putnam_2023_b3 before 9f8cf2b: the guard joined the left side of the `↔`.
IFF = Pair(
    "Show that for every $i$ with $i + 2 < k$, $y_{i+2} < y_{i+1}$ iff $y_i < y_{i+1}$.",
    "theorem t (y : ℕ → ℝ) (k : ℕ) : ∀ i, i + 2 < k → y (i + 2) < y (i + 1) ↔ y i < y (i + 1)",
)
# PutnamBench putnam_2003_a2 before 9cd2031, which added `0 < n`.
DENOMINATOR = Pair(
    "Show that $(a_1 \\cdots a_n)^{1/n} \\le (a_1 + \\cdots + a_n) / n$.",
    "theorem t (n : ℕ) (a : Fin n → ℝ) : (∏ i, a i) ^ ((1 : ℝ) / n) ≤ (∑ i, a i) / n",
)
CLEAN = Pair(
    "Let $x$ be a real number. Show that $x^2 \\geq 0$.",
    "theorem t (x : ℝ) : x ^ 2 ≥ 0 := by sorry",
)
CASES = {"unused": UNUSED, "iff": IFF, "denominator": DENOMINATOR, "clean": CLEAN}
NEW_CODES = {
    "unused": "unused_variable",
    "iff": "implication_in_iff",
    "denominator": "nat_zero_denominator",
}
SPANS = {"unused": "b", "iff": "↔", "denominator": "/ n"}


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    return await stored_passed(session_factory, CASES, evidence_version="evidence-5")


async def test_a_dry_run_moves_exactly_the_pairs_the_new_checks_see(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    assert EVIDENCE_VERSION == "evidence-8"
    await assert_dry_run_moves_only(session_factory, ids, list(NEW_CODES), untouched="iff")


async def test_applying_stores_each_new_finding_with_its_span(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    await applied(session_factory)
    await assert_each_new_finding_stored(session_factory, ids, CASES, NEW_CODES, SPANS, sole=True)
