"""Shared by the re-scoring tests (test_rescore and the test_evidence*_rescore files): a
finished screening stored as an earlier parser or evidence version left it, the rescore
run as those tests start it, and a screening read back."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.contract.provider_reply import ProviderReply
from app.evidence import EVIDENCE_VERSION
from app.models import Screening
from app.policy import POLICY_VERSION
from app.repositories import pairs, reviews, screenings
from app.repositories.rescores import Scope
from app.repositories.reviews import ReviewRecord
from app.rescore.replay import CURRENT_PARSER, Parser, Reader, read_text_reply
from app.rescore.service import RescoreRun, rescore
from app.vocabulary import Pair, Purpose, Role
from tests.support.scripted_openai import contract_reply


async def stored_screening(
    session: AsyncSession,
    pair: Pair,
    external_id: str,
    replies: Sequence[str] = (),
    *,
    read: Reader = read_text_reply,
    batch_id: str | None = None,
    outcome: str = "passed",
    reasons: Sequence[str] = (),
    evidence: Sequence[Mapping[str, object]] = (),
    evidence_version: str = EVIDENCE_VERSION,
    label: str | None = None,
) -> str:
    """A finished screening of `pair` (not committed), stamped with today's policy version
    and `evidence_version`, with one review a reply (the translator's, then the judge's),
    each as `read` read it."""
    row = await pairs.get_or_create(session, pair)
    screening = await screenings.add(
        session, pair_id=row.id, external_id=external_id, batch_id=batch_id, confirmations=0,
        label=label,
    )  # fmt: skip
    await screenings.record_outcome(
        session, screening.id, outcome=outcome, reasons=list(reasons), evidence=list(evidence),
        policy_version=POLICY_VERSION, evidence_version=evidence_version,
    )  # fmt: skip
    for role, reply in zip((Role.TRANSLATOR, Role.JUDGE), replies, strict=False):
        await reviews.add(session, review_record(screening.id, role, reply, read))
    return screening.id


def review_record(screening_id: str, role: Role, reply: str, read: Reader) -> ReviewRecord:
    """The first review attempt of `role`, a reply that finished with `stop`."""
    reading = read(ProviderReply(reply, "stop"))
    return ReviewRecord(
        screening_id=screening_id, role=role, attempt=1, purpose=Purpose.REVIEW,
        raw_response=reply, finish_reason="stop", verdict=reading.verdict,
        parse_status=reading.parse_status, parser_version=reading.parser_version,
        back_translation=reading.back_translation, issues=reading.issues,
    )  # fmt: skip


async def dry_run(
    session_factory: async_sessionmaker[AsyncSession], scope: Scope, parser: Parser | None = None
) -> RescoreRun:
    return await rescore(
        session_factory, scope, apply=False, actor="t", format_retries=2, audit_rate=0.0,
        parser=parser or CURRENT_PARSER,
    )  # fmt: skip


async def applied(
    session_factory: async_sessionmaker[AsyncSession], scope: Scope | None = None, **options: Any
) -> RescoreRun:
    """`rescore` applied (to every screening unless `scope` says otherwise), with two format
    retries and no audit sampling unless `options` say otherwise."""
    settings: dict[str, Any] = {"format_retries": 2, "audit_rate": 0.0} | options
    return await rescore(session_factory, scope or Scope(), apply=True, actor="t", **settings)


async def assert_dry_run_moves_only(
    session_factory: async_sessionmaker[AsyncSession],
    ids: Mapping[str, str],
    moved: Sequence[str],
    untouched: str,
) -> RescoreRun:
    """A dry run under the installed evidence version moves exactly the `moved` cases from
    passed to needs_review, and writes nothing (`untouched`'s stored outcome stays)."""
    run = await dry_run(session_factory, Scope())
    assert run.diff.evidence_version == EVIDENCE_VERSION
    assert dict(run.diff.transitions) == {"passed -> needs_review": len(moved)}
    assert sorted(run.diff.changed_ids) == sorted(ids[name] for name in moved)
    assert (await stored(session_factory, ids[untouched])).outcome == "passed"
    return run


async def stored(session_factory: async_sessionmaker[AsyncSession], screening_id: str) -> Screening:
    async with session_factory() as session:
        screening = await session.get(Screening, screening_id)
        assert screening is not None
        return screening


async def stored_passed(
    session_factory: async_sessionmaker[AsyncSession],
    cases: Mapping[str, Pair],
    evidence_version: str,
) -> dict[str, str]:
    """Each case stored as a screening both roles read FAITHFUL under `evidence_version`."""
    faithful = contract_reply("FAITHFUL")
    async with session_factory() as session:
        ids = {
            name: await stored_screening(
                session, pair, name, (faithful, faithful), evidence_version=evidence_version
            )
            for name, pair in cases.items()
        }
        await session.commit()
    return ids


async def assert_each_new_finding_stored(
    session_factory: async_sessionmaker[AsyncSession],
    ids: Mapping[str, str],
    cases: Mapping[str, Pair],
    codes: Mapping[str, str],
    spans: Mapping[str, str],
    *,
    sole: bool,
) -> None:
    """After an apply: each case of `codes` went to needs_review under today's version, its
    first finding (its only one where `sole`) that code, marking `spans[name]` in the formal
    text; `clean` stayed passed."""
    for name, code in codes.items():
        screening = await stored(session_factory, ids[name])
        assert (screening.outcome, screening.evidence_version) == ("needs_review", EVIDENCE_VERSION)
        assert f"evidence_review:{code}" in screening.reasons
        assert len(screening.evidence) == 1 or not sole, screening.evidence
        finding = screening.evidence[0]
        assert finding["code"] == code and finding["severity"] == "review"
        line = cases[name].formal.split("\n")[finding["line"] - 1]
        assert line[finding["column"] : finding["end_column"]] == spans[name]
    clean = await stored(session_factory, ids["clean"])
    assert (clean.outcome, clean.evidence) == ("passed", [])
