"""Re-scoring screenings stored under contract-2 with contract-3 (a reply counts only after
a finish reason the contract lists as a completion), on SQLite and PostgreSQL. No model is
called.

The stored data is what contract-2 wrote: it read every finish reason but `length` and
`content_filter` as a complete reply, so a FAITHFUL reply that ended with `error`,
`max_tokens` or no reason at all passed.

    ERROR       passed  T ended `error`                J stop       -> needs_review
    MAX_TOKENS  passed  T ended `max_tokens`           J stop       -> needs_review
    NULL        passed  T ended with no reason         J stop       -> needs_review
    JUDGE_CUT   passed  T stop                         J `model_length` -> needs_review
    CLEAN       passed  both stop                                   (stays passed)
    SUPPLIED    passed  both supplied, no reason (none is possible) (stays passed)
"""

from __future__ import annotations

import asyncio
import json
import re

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract import PARSER_VERSION, parse_reply
from app.evidence import EVIDENCE_VERSION
from app.models import QueueItem, Review, RulingRow
from app.policy import POLICY_VERSION
from app.repositories import pairs, reviews, screenings
from app.repositories.rescores import Scope
from app.repositories.reviews import ReviewRecord
from app.rescore.service import rescore
from tests.integration.test_rescore import counts, outcome_of, pair, run_cli
from tests.support.scripted_openai import contract_reply

FAITHFUL = contract_reply("FAITHFUL")
# How contract-2 read FAITHFUL under any reason but `length` and `content_filter`.
READ = parse_reply(FAITHFUL)
# name -> (translator's finish reason, judge's, supplied)
CASES: dict[str, tuple[str | None, str | None, bool]] = {
    "error": ("error", "stop", False),
    "max_tokens": ("max_tokens", "stop", False),
    "null": (None, "stop", False),
    "judge_cut": ("stop", "model_length", False),
    "clean": ("stop", "stop", False),
    "supplied": (None, None, True),
}
MOVED = ("error", "max_tokens", "null", "judge_cut")


async def stored_under_contract_2(
    session: AsyncSession, n: int, finishes: tuple[str | None, str | None], supplied: bool
) -> str:
    """A passed screening as contract-2 stored it, under today's policy and evidence."""
    row = await pairs.get_or_create(session, pair(n))
    screening = await screenings.add(
        session, pair_id=row.id, external_id=f"c{n}", batch_id=None, confirmations=0
    )
    await screenings.record_outcome(
        session, screening.id, outcome="passed", reasons=[], evidence=[],
        policy_version=POLICY_VERSION, evidence_version=EVIDENCE_VERSION,
    )  # fmt: skip
    for role, finish in zip(("translator", "judge"), finishes, strict=True):
        await reviews.add(
            session,
            ReviewRecord(
                screening_id=screening.id, role=role, attempt=1, purpose="review",
                raw_response=FAITHFUL, finish_reason=finish, verdict=READ.verdict,
                parse_status=READ.parse_status, parser_version="contract-2",
                back_translation=READ.back_translation, issues=READ.issues, supplied=supplied,
            ),
        )  # fmt: skip
    return screening.id


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    async with session_factory() as session:
        ids = {
            name: await stored_under_contract_2(session, n, (t, j), supplied)
            for n, (name, (t, j, supplied)) in enumerate(CASES.items(), start=1)
        }
        await session.commit()
    return ids


async def test_a_dry_run_shows_every_reply_without_a_completion_moving(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    ids = await seed(session_factory)
    before = await counts(session_factory)

    diff = json.loads(await asyncio.to_thread(run_cli, database_url, "--all", "--json"))

    assert diff["versions"] == {"parser": PARSER_VERSION, "policy": POLICY_VERSION,
                                "evidence": EVIDENCE_VERSION}  # fmt: skip
    assert (diff["considered"], diff["changed"], diff["unchanged"]) == (6, 4, 2)
    assert diff["transitions"] == {"passed -> needs_review": 4}
    assert diff["reasons_added"] == {"translator_truncated": 3, "judge_truncated": 1}
    assert diff["readings"] == {"ok/faithful -> truncated/unclear": 4}
    assert diff["unversioned"] == 0
    # The clean and the supplied pairs stay passed, decided again under contract-3.
    assert diff["restamped"] == 2
    # Each moved reply would now be re-asked: a format retry that was never made.
    assert diff["incomplete"] == 4
    assert sorted(diff["changed_ids"]) == sorted(ids[name] for name in MOVED)
    assert await counts(session_factory) == before


async def test_the_text_diff_names_the_move(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    await seed(session_factory)
    output = await asyncio.to_thread(run_cli, database_url, "--all")
    assert f"parser {PARSER_VERSION}" in output
    assert "unchanged 2 (of which 2 under new versions), changed 4" in output
    assert re.search(r"passed -> needs_review\s+4\n", output)
    assert re.search(r"ok/faithful -> truncated/unclear\s+4", output)
    assert "WARNING" not in output  # no move without a new version


async def test_applying_queues_the_moved_pairs_and_keeps_the_raw_reasons(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    run = await rescore(
        session_factory, Scope(), apply=True, actor="t", format_retries=2, audit_rate=0.0
    )
    assert (run.diff.applied, run.diff.restamps_applied, run.diff.unversioned) == (4, 2, 0)
    for name in MOVED:
        assert await outcome_of(session_factory, ids[name]) == "needs_review", name
    for name in ("clean", "supplied"):
        assert await outcome_of(session_factory, ids[name]) == "passed", name
    async with session_factory() as session:
        items = (await session.scalars(select(QueueItem))).all()
        stored = (await session.scalars(select(Review))).all()
        mine = select(RulingRow).where(RulingRow.screening_id == ids["null"])
        rulings = (await session.scalars(mine.order_by(RulingRow.id))).all()
    assert sorted((i.screening_id, tuple(i.reasons)) for i in items) == sorted(
        [(ids[n], ("translator_truncated",)) for n in ("error", "max_tokens", "null")]
        + [(ids["judge_cut"], ("judge_truncated",))]
    )
    # Stored reviews are never rewritten: the raw reasons and contract-2's readings stay.
    expected = {(t, j) for t, j, _ in CASES.values()}
    by_screening = {
        sid: {r.role: r.finish_reason for r in stored if r.screening_id == sid}
        for sid in ids.values()
    }
    assert {(f["translator"], f["judge"]) for f in by_screening.values()} == expected
    assert {(r.parse_status, r.parser_version) for r in stored} == {("ok", "contract-2")}
    old, new = rulings
    assert (old.outcome, old.parser_version) == ("passed", "contract-2")
    assert (new.outcome, new.parser_version) == ("needs_review", PARSER_VERSION)
