"""The Lean reader's version (app/lean/body.py LEAN_READER_VERSION), on SQLite and
PostgreSQL: each stored check names the reader that read its body, the API and the
decisions export show it, migration 0019 stamps the checks stored before it as `lean-1`,
and a re-score counts the reader it read each stored body with, so a move that only a newer
reader explains is applied (never left as `unversioned`) with that reader on its ruling."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.engine import create_engine, make_session_factory, sync_url
from app.db.migrate import alembic_config, upgrade_to_head
from app.evidence import EVIDENCE_VERSION
from app.lean import LEAN_READER_VERSION, LeanCall, LeanReading
from app.models.rescore import RulingRow
from app.policy import LEAN_POLICY_VERSION
from app.repositories import lean_checks, pairs, reviews, screenings
from app.repositories.lean_checks import LeanCheckRecord
from app.repositories.rescores import Scope
from app.rescore.replay import read_text_reply
from app.rescore.service import rescore
from app.vocabulary import LeanStatus, Pair, Role
from tests.integration.test_lean_checks import finished, kimina, lean_settings, submit
from tests.support.in_process_api import StartApi
from tests.support.rescoring import review_record
from tests.support.scripted_kimina import Recorded, ScriptedKimina, recorded
from tests.support.scripted_openai import ScriptedOpenAI, contract_reply

__all__ = ["kimina"]  # the fixture, shared with test_lean_checks

PAIR = Pair("For every integer x, x = x.", "theorem t (x : Int) : x = x := by sorry", "")


async def test_the_api_and_the_export_show_the_reader_of_each_check(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [Recorded("unknown_identifier.json")])
    settings = lean_settings(database_url, scripted_openai, kimina.base_url).model_copy(
        update={"audit_rate": 1.0, "review_blind": "off"}
    )
    async with start_api(settings) as api:
        screening = await finished(api, await submit(api))
        item = (await api.client.get("/v1/queue")).json()["items"][0]
        await api.client.post(f"/v1/queue/{item['id']}/claim")
        decided = await api.client.post(
            f"/v1/queue/{item['id']}/decision", json={"decision": "mismatch", "note": "x"}
        )
        assert decided.status_code == 201, decided.text
        export = (await api.client.get("/v1/decisions/export")).text
    assert screening["lean_check"]["reader_version"] == LEAN_READER_VERSION
    (line,) = map(json.loads, export.splitlines())
    assert (line["lean_status"], line["lean_reader_version"]) == ("error", LEAN_READER_VERSION)


def _check(screening_id: str, body: str, status: LeanStatus, reader: str) -> LeanCheckRecord:
    """A stored check whose body `reader` (an older one) read as `status`."""
    call = LeanCall(
        server_url="http://lean.test", server_version="2.0.0", snippet_id=screening_id,
        code=PAIR.formal, timeout_seconds=60, http_status=200,
        raw_body=body.replace("SNIPPET_ID", screening_id), failure=None, error=None,
        latency_ms=5, attempts=1,
    )  # fmt: skip
    return LeanCheckRecord(call, LeanReading(status, reader_version=reader), screening_id)


async def _passed_after_lean(session: AsyncSession, check_body: str, reader: str) -> str:
    """A screening the models passed after an older Lean reader read its check as ok."""
    row = await pairs.get_or_create(session, PAIR)
    screening = await screenings.add(
        session, pair_id=row.id, external_id=None, batch_id=None, confirmations=0
    )
    await screenings.record_outcome(
        session, screening.id, outcome="passed", reasons=[], evidence=[],
        policy_version=LEAN_POLICY_VERSION, evidence_version=EVIDENCE_VERSION,
    )  # fmt: skip
    for role in (Role.TRANSLATOR, Role.JUDGE):
        reply = contract_reply("FAITHFUL")
        await reviews.add(session, review_record(screening.id, role, reply, read_text_reply))
    await lean_checks.add(session, _check(screening.id, check_body, LeanStatus.OK, reader))
    return screening.id


async def test_a_rescore_reads_each_stored_check_again_and_a_newer_reader_moves_it(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    # The body says `Unknown identifier`: today's reader reads error; the stored row says a
    # reader before it read ok (as lean-1 read a body lean-2 refuses, say).
    async with session_factory() as session:
        screening_id = await _passed_after_lean(session, recorded("unknown_identifier.json"), "x")
        await session.commit()
    run = await rescore(
        session_factory, Scope(), apply=True, actor="test",
        format_retries=1, audit_rate=0.0,
    )  # fmt: skip
    diff = run.diff.as_json()
    assert diff["readers"][LEAN_READER_VERSION] == 1
    assert (diff["changed"], diff["unversioned"], diff["applied"]) == (1, 0, 1)
    assert diff["transitions"] == {"passed -> flagged": 1}
    async with session_factory() as session:
        moved = await screenings.get(session, screening_id)
        rulings = (
            await session.scalars(
                sa.select(RulingRow).where(RulingRow.screening_id == screening_id)
            )
        ).all()
        stored = await lean_checks.for_screening(session, screening_id)
    assert moved is not None and (moved.outcome, moved.reasons) == ("flagged", ["lean_error"])
    # The ruling it replaced names the reader before; the new one today's.
    by_rescore = {ruling.rescore_id is None: ruling.parser_version for ruling in rulings}
    assert "x" in by_rescore[True].split(",")
    assert LEAN_READER_VERSION in by_rescore[False].split(",")
    # The stored check is never changed: it still says what its reader read.
    assert stored is not None and (stored.status, stored.reader_version) == (LeanStatus.OK, "x")
    again = await rescore(
        session_factory, Scope(), apply=True, actor="test",
        format_retries=1, audit_rate=0.0,
    )  # fmt: skip
    assert (again.diff.changed, again.diff.restamped, again.diff.unversioned) == (0, 0, 0)


async def _add_check(url: str) -> str:
    engine = create_engine(url)
    try:
        sessions = make_session_factory(engine)
        async with sessions() as session:
            row = await pairs.get_or_create(session, PAIR)
            screening = await screenings.add(
                session, pair_id=row.id, external_id=None, batch_id=None, confirmations=0
            )
            body = recorded("sorry_goal.json")
            record = _check(screening.id, body, LeanStatus.OK, LEAN_READER_VERSION)
            await lean_checks.add(session, record)
            await session.commit()
            return screening.id
    finally:
        await engine.dispose()


def _reader_and_update(url: str, screening_id: str) -> tuple[Any, str | None]:
    """The stored reader version, and the error an UPDATE of the row meets (None: none)."""
    engine = sa.create_engine(sync_url(url), poolclass=sa.NullPool)
    try:
        with engine.connect() as connection:
            reader = connection.execute(
                sa.text("SELECT reader_version FROM lean_checks WHERE screening_id = :id"),
                {"id": screening_id},
            ).scalar_one()
        try:
            with engine.begin() as connection:
                connection.execute(sa.text("UPDATE lean_checks SET goal = 'changed'"))
        except sa.exc.DBAPIError as error:
            return reader, str(error)
        return reader, None
    finally:
        engine.dispose()


@pytest.mark.parametrize("at", ["0018_retention"])
async def test_migration_0019_stamps_the_checks_before_it_lean_1_and_keeps_them_append_only(
    empty_database_url: str, at: str
) -> None:
    upgrade_to_head(empty_database_url)
    screening_id = await _add_check(empty_database_url)
    # Back to before the column, then up again: the row is one stored before 0019.
    command.downgrade(alembic_config(empty_database_url), at)
    command.upgrade(alembic_config(empty_database_url), "0019_lean_reader")
    reader, refused = _reader_and_update(empty_database_url, screening_id)
    assert reader == "lean-1"
    assert refused is not None and "append-only" in refused
    upgrade_to_head(empty_database_url)
