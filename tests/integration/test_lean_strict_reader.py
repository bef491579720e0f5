"""lean-2 through the API and a re-score, on SQLite and PostgreSQL: a Kimina answer whose
`response` is empty needs review with no model asked (lean-1 read it `ok` and let the models
pass the pair), and a re-score moves a pass that lean-1 let through to needs_review, as a
versioned change."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.lean import LEAN_READER_VERSION
from app.repositories import screenings
from app.repositories.rescores import Scope
from app.rescore.service import rescore
from tests.integration.test_lean_checks import finished, kimina, lean_settings, submit
from tests.integration.test_lean_reader_version import _passed_after_lean
from tests.support.in_process_api import StartApi
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import ScriptedOpenAI

__all__ = ["kimina"]  # the fixture, shared with test_lean_checks

EMPTIED = {
    "an empty response": ("sorry_goal.json", ('"response":{', '"response":{},"was":{')),
    "messages hidden": ("sorry_goal.json", ('"messages"', '"said"')),
    "sorries hidden": ("sorry_goal.json", ('"sorries"', '"others"')),
}


@pytest.mark.parametrize("case", sorted(EMPTIED))
async def test_an_answer_that_shows_no_elaboration_needs_review_and_asks_no_model(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    case: str,
) -> None:
    name, edit = EMPTIED[case]
    kimina.script_code("refl_int", [Recorded(name, edit)])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
    assert (screening["outcome"], screening["reasons"]) == ("needs_review", ["lean_unavailable"])
    check = screening["lean_check"]
    assert (check["status"], check["reader_version"]) == ("unavailable", "lean-2")
    assert "messages" in check["detail"] or "sorry goal" in check["detail"]
    assert scripted_openai.requests == []


async def test_a_rescore_moves_a_pass_lean_1_read_from_an_empty_response(
    session_factory: async_sessionmaker[AsyncSession],
) -> None:
    body = '{"results":[{"id":"SNIPPET_ID","time":0.01,"response":{}}]}'
    async with session_factory() as session:
        screening_id = await _passed_after_lean(session, body, "lean-1")
        await session.commit()
    run = await rescore(
        session_factory, Scope(), apply=True, actor="test", format_retries=1, audit_rate=0.0
    )
    assert run.diff.readers[LEAN_READER_VERSION] == 1
    assert (run.diff.changed, run.diff.unversioned, run.diff.applied) == (1, 0, 1)
    async with session_factory() as session:
        moved = await screenings.get(session, screening_id)
    assert moved is not None
    assert (moved.outcome, moved.reasons) == ("needs_review", ["lean_unavailable"])
