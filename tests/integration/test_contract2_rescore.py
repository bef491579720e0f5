"""Re-scoring screenings stored under contract-1 with contract-2's rule 7 (`ambiguous`), as
the current parser (contract-3 on, which keeps rule 7) reads them, on SQLite and PostgreSQL.
No model is called.

The stored data is what contract-1 wrote: it read a reply whose MISMATCH line hides behind
a U+2028 as ok/faithful, so the pair passed, under policy-1 and evidence-1.

    SUPPLIED  passed  T supplied, the hidden MISMATCH     J FAITHFUL   (no retry possible)
    CALLED    passed  T from a provider, the same reply   J FAITHFUL   (a retry never made)
    CLEAN     passed  both FAITHFUL                                     (stays passed)
"""

from __future__ import annotations

import asyncio
import json
import re

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract import PARSER_VERSION, parse_reply
from app.evidence import EVIDENCE_VERSION
from app.models import QueueItem, RulingRow
from app.policy import POLICY_VERSION
from app.repositories import pairs, reviews, screenings
from app.repositories.rescores import Scope
from app.repositories.reviews import ReviewRecord
from app.rescore.service import rescore
from app.vocabulary import ParseStatus
from tests.integration.test_rescore import counts, outcome_of, pair, run_cli
from tests.support.scripted_openai import contract_reply

FAITHFUL = contract_reply("FAITHFUL")
HIDDEN = (
    "BACK-TRANSLATION: For every natural number n, n + 1 = 1 + n.\n"
    "ISSUES: none\u2028VERDICT: MISMATCH\n"
    "VERDICT: FAITHFUL\n"
)
# How contract-1 read each reply (its strict reading; rule 7 did not exist).
CONTRACT_1 = {
    HIDDEN: ("faithful", "ok", "For every natural number n, n + 1 = 1 + n.",
             "none\u2028VERDICT: MISMATCH"),
    FAITHFUL: ("faithful", "ok", "The formal statement says what the informal one says.",
               "none"),
}  # fmt: skip


async def stored_under_contract_1(
    session: AsyncSession, n: int, translator: str, *, supplied: bool
) -> str:
    """A passed screening as contract-1, policy-1 and evidence-1 stored it."""
    row = await pairs.get_or_create(session, pair(n))
    screening = await screenings.add(
        session, pair_id=row.id, external_id=f"c{n}", batch_id=None, confirmations=0
    )
    await screenings.record_outcome(
        session, screening.id, outcome="passed", reasons=[], evidence=[],
        policy_version="policy-1", evidence_version="evidence-1",
    )  # fmt: skip
    for role, reply in (("translator", translator), ("judge", FAITHFUL)):
        verdict, status, back_translation, issues = CONTRACT_1[reply]
        await reviews.add(
            session,
            ReviewRecord(
                screening_id=screening.id, role=role, attempt=1, purpose="review",
                raw_response=reply, finish_reason="stop", verdict=verdict, parse_status=status,
                parser_version="contract-1", back_translation=back_translation, issues=issues,
                supplied=supplied,
            ),
        )  # fmt: skip
    return screening.id


async def seed(session_factory: async_sessionmaker[AsyncSession]) -> dict[str, str]:
    async with session_factory() as session:
        ids = {
            "supplied": await stored_under_contract_1(session, 1, HIDDEN, supplied=True),
            "called": await stored_under_contract_1(session, 2, HIDDEN, supplied=False),
            "clean": await stored_under_contract_1(session, 3, FAITHFUL, supplied=False),
        }
        await session.commit()
    return ids


def test_the_stored_readings_are_what_the_strict_reading_still_finds() -> None:
    # contract-2 keeps the strict reading's text fields; only the status moved.
    reading = parse_reply(HIDDEN)
    assert (reading.back_translation, reading.issues) == CONTRACT_1[HIDDEN][2:]
    assert reading.parse_status is ParseStatus.AMBIGUOUS
    assert parse_reply(FAITHFUL).is_faithful


async def test_a_dry_run_shows_the_hidden_mismatch_moving_under_the_new_versions(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    ids = await seed(session_factory)
    before = await counts(session_factory)

    diff = json.loads(await asyncio.to_thread(run_cli, database_url, "--all", "--json"))

    assert diff["versions"] == {"parser": PARSER_VERSION, "policy": POLICY_VERSION,
                                "evidence": EVIDENCE_VERSION}  # fmt: skip
    assert (diff["considered"], diff["changed"], diff["unchanged"]) == (3, 2, 1)
    assert diff["transitions"] == {"passed -> needs_review": 2}
    assert diff["reasons_added"] == {"translator_ambiguous": 2}
    assert diff["readings"] == {"ok/faithful -> ambiguous/unclear": 2}
    # A move that comes with a new parser version: versioned, so it can be applied.
    assert diff["unversioned"] == 0
    # The clean pair stays passed, decided again under the new versions.
    assert diff["restamped"] == 1
    # The called reply would now get a format retry that was never made; the supplied
    # one had no provider to ask, so its replay is complete.
    assert diff["incomplete"] == 1
    assert sorted(diff["changed_ids"]) == sorted([ids["supplied"], ids["called"]])
    assert await counts(session_factory) == before
    assert await outcome_of(session_factory, ids["supplied"]) == "passed"


async def test_the_text_diff_names_the_move_and_warns_of_nothing(
    session_factory: async_sessionmaker[AsyncSession], database_url: str
) -> None:
    await seed(session_factory)
    output = await asyncio.to_thread(run_cli, database_url, "--all")
    versions = f"parser {PARSER_VERSION}, policy {POLICY_VERSION}, evidence {EVIDENCE_VERSION}"
    assert versions in output
    assert "unchanged 1 (of which 1 under new versions), changed 2" in output
    assert re.search(r"passed -> needs_review\s+2\n\s+\+translator_ambiguous\s+2\n", output)
    assert re.search(r"ok/faithful -> ambiguous/unclear\s+2", output)
    assert "WARNING" not in output  # no move without a new version


async def test_applying_puts_the_hidden_mismatch_in_the_queue_and_keeps_the_old_ruling(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    ids = await seed(session_factory)
    run = await rescore(
        session_factory, Scope(), apply=True, actor="t", format_retries=2, audit_rate=0.0
    )
    assert (run.diff.applied, run.diff.restamps_applied, run.diff.unversioned) == (2, 1, 0)
    assert await outcome_of(session_factory, ids["supplied"]) == "needs_review"
    assert await outcome_of(session_factory, ids["clean"]) == "passed"
    async with session_factory() as session:
        items = (await session.scalars(select(QueueItem))).all()
        mine = select(RulingRow).where(RulingRow.screening_id == ids["supplied"])
        rulings = (await session.scalars(mine.order_by(RulingRow.id))).all()
    assert sorted((i.screening_id, tuple(i.reasons)) for i in items) == sorted(
        [(ids["supplied"], ("translator_ambiguous",)), (ids["called"], ("translator_ambiguous",))]
    )
    old, new = rulings
    assert (old.outcome, old.parser_version, old.evidence_version) == (
        "passed", "contract-1", "evidence-1"
    )  # fmt: skip
    assert (new.outcome, new.parser_version, new.evidence_version) == (
        "needs_review", PARSER_VERSION, EVIDENCE_VERSION
    )  # fmt: skip
