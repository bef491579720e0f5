"""Re-scoring screenings stored under evidence-2 with evidence-3's new checks, on SQLite and
PostgreSQL. No model is called; both stored readings are faithful under today's parser.

    DEFAULT    passed  `(n : ℕ := 5)` in the theorem      -> flagged (binder_default, flag)
    DISTANCE   passed  `dist` on `ℝ × ℝ` points           -> needs_review (function_space_distance)
    OLD        needs_review, a finding stored without a span (evidence-2), still found
    CLEAN      passed  nothing to find                    (stays passed, restamped)
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.evidence import EVIDENCE_VERSION
from app.repositories.rescores import Scope
from app.vocabulary import Pair
from tests.support.rescoring import applied, dry_run, stored, stored_screening
from tests.support.scripted_openai import contract_reply

FAITHFUL = contract_reply("FAITHFUL")
DEFAULT = Pair("Let n = 5. Show that n + 0 = 5.", "theorem t (n : ℕ := 5) : n + 0 = 5 := by sorry")
DISTANCE = Pair(
    "Points A = (0, 0) and B = (3, 4) in the plane are 5 apart.",
    "theorem t (A B : ℝ × ℝ) (hA : A = (0, 0)) (hB : B = (3, 4)) : dist A B = 5 := by sorry",
)
OLD = Pair("Show that r^(1/3) = 1 for r = 8.", "theorem t (r : ℝ) : r ^ (1 / 3) = 1 := by sorry")
CLEAN = Pair("For every natural number n, n + 0 = n.", "theorem t (n : ℕ) : n + 0 = n := by sorry")
# What evidence-2 stored for OLD: no span fields.
OLD_FINDING = {
    "code": "truncating_division",
    "message": "the exponent `(1 / 3)` is computed in ℕ/ℤ",
    "severity": "review",
}


async def stored_under_evidence_2(
    session: AsyncSession, name: str, pair: Pair, outcome: str, reasons: list[str]
) -> str:
    evidence = [OLD_FINDING] if name == "old" else []
    return await stored_screening(
        session, pair, name, (FAITHFUL, FAITHFUL), outcome=outcome, reasons=reasons,
        evidence=evidence, evidence_version="evidence-2",
    )  # fmt: skip


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    old_reasons = ["evidence_review", "evidence_review:truncating_division"]
    async with session_factory() as session:
        ids = {
            "default": await stored_under_evidence_2(session, "default", DEFAULT, "passed", []),
            "distance": await stored_under_evidence_2(session, "distance", DISTANCE, "passed", []),
            "old": await stored_under_evidence_2(session, "old", OLD, "needs_review", old_reasons),
            "clean": await stored_under_evidence_2(session, "clean", CLEAN, "passed", []),
        }
        await session.commit()
    return ids


async def test_a_dry_run_moves_exactly_the_pairs_the_new_checks_see(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    run = await dry_run(session_factory, Scope())
    diff = run.diff
    assert diff.evidence_version == EVIDENCE_VERSION
    assert dict(diff.transitions) == {"passed -> flagged": 1, "passed -> needs_review": 1}
    assert sorted(diff.changed_ids) == sorted([ids["default"], ids["distance"]])
    assert diff.unversioned == 0
    assert (await stored(session_factory, ids["default"])).outcome == "passed"  # nothing written


async def test_applying_stores_the_new_findings_with_their_spans(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    await applied(session_factory)

    default = await stored(session_factory, ids["default"])
    assert (default.outcome, default.evidence_version) == ("flagged", EVIDENCE_VERSION)
    assert "evidence_flag:binder_default" in default.reasons
    (finding,) = default.evidence
    assert finding["code"] == "binder_default" and finding["severity"] == "flag"
    line = DEFAULT.formal.split("\n")[finding["line"] - 1]
    assert (finding["field"], line[finding["column"] : finding["end_column"]]) == (
        "formal", "(n : ℕ := 5)"
    )  # fmt: skip

    distance = await stored(session_factory, ids["distance"])
    assert distance.outcome == "needs_review"
    assert "evidence_review:function_space_distance" in distance.reasons

    old = await stored(session_factory, ids["old"])  # found again: the same outcome and reasons
    assert old.outcome == "needs_review"
    assert [f["code"] for f in old.evidence] == ["truncating_division"]
    assert (await stored(session_factory, ids["clean"])).outcome == "passed"
