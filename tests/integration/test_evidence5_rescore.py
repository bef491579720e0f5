"""Re-scoring screenings stored under evidence-4 with evidence-5's new checks, on SQLite and
PostgreSQL. No model is called; both stored readings are faithful under today's parser.

    NARROWER   passed  reals typed `ℕ`                        -> needs_review
    RANGE      passed  `Finset.range n` for a sum from 1 to n -> needs_review
    VACUOUS    passed  `0 < x` and `x < 0`                    -> needs_review
    CLEAN      passed  nothing to find                        (stays passed, restamped)
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract import parse_reply
from app.evidence import EVIDENCE_VERSION
from app.models import Screening
from app.policy import POLICY_VERSION
from app.repositories import pairs, reviews, screenings
from app.repositories.rescores import Scope
from app.repositories.reviews import ReviewRecord
from app.rescore.service import rescore
from app.vocabulary import Pair
from tests.support.scripted_openai import contract_reply

FAITHFUL = contract_reply("FAITHFUL")
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


async def stored_under_evidence_4(session: AsyncSession, name: str, pair: Pair) -> str:
    row = await pairs.get_or_create(session, pair)
    screening = await screenings.add(
        session, pair_id=row.id, external_id=name, batch_id=None, confirmations=0
    )
    await screenings.record_outcome(
        session, screening.id, outcome="passed", reasons=[], evidence=[],
        policy_version=POLICY_VERSION, evidence_version="evidence-4",
    )  # fmt: skip
    reading = parse_reply(FAITHFUL)
    for role in ("translator", "judge"):
        await reviews.add(
            session,
            ReviewRecord(
                screening_id=screening.id, role=role, attempt=1, purpose="review",
                raw_response=FAITHFUL, finish_reason="stop", verdict=reading.verdict.value,
                parse_status=reading.parse_status.value, parser_version=reading.parser_version,
                back_translation=reading.back_translation, issues=reading.issues,
            ),
        )  # fmt: skip
    return screening.id


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    async with session_factory() as session:
        ids = {name: await stored_under_evidence_4(session, name, p) for name, p in CASES.items()}
        await session.commit()
    return ids


async def stored(session_factory: async_sessionmaker[AsyncSession], screening_id: str) -> Screening:
    async with session_factory() as session:
        screening = await session.get(Screening, screening_id)
        assert screening is not None
        return screening


async def test_a_dry_run_moves_exactly_the_pairs_the_new_checks_see(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    run = await rescore(
        session_factory, Scope(), apply=False, actor="t", format_retries=2, audit_rate=0
    )
    diff = run.diff
    assert diff.evidence_version == EVIDENCE_VERSION == "evidence-5"
    assert dict(diff.transitions) == {"passed -> needs_review": 3}
    assert sorted(diff.changed_ids) == sorted(ids[name] for name in NEW_CODES)
    assert (await stored(session_factory, ids["range"])).outcome == "passed"  # nothing written


async def test_applying_stores_each_new_finding_with_its_span(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    await rescore(session_factory, Scope(), apply=True, actor="t", format_retries=2, audit_rate=0)
    spans = {"narrower": "x", "range": "Finset.range n", "vacuous": "0"}
    for name, code in NEW_CODES.items():
        screening = await stored(session_factory, ids[name])
        assert (screening.outcome, screening.evidence_version) == ("needs_review", "evidence-5")
        assert f"evidence_review:{code}" in screening.reasons
        finding = screening.evidence[0]
        assert finding["code"] == code and finding["severity"] == "review"
        line = CASES[name].formal.split("\n")[finding["line"] - 1]
        assert line[finding["column"] : finding["end_column"]] == spans[name]
    clean = await stored(session_factory, ids["clean"])
    assert (clean.outcome, clean.evidence) == ("passed", [])
