"""A re-scoring run records which readers it read stored replies with (`readers`), since its
`versions.parser` names the contract parser alone: a run over tool and JSON replies says
tool-1 / json-1 read them, over the API, in the stored run and on the CLI's text. SQLite
and PostgreSQL, through the real client against the scripted provider."""

from __future__ import annotations

import asyncio

from sqlalchemy import select
from typer.testing import CliRunner

import app.cli.rescore  # noqa: F401 -- registers the command on `cli`
from app.cli.root import cli
from app.models.rescore import Rescore
from tests.integration.test_reply_formats import FORMAL, screened, settings_for
from tests.support.in_process_api import StartApi
from tests.support.scripted_openai import ScriptedOpenAI


async def test_a_run_records_the_readers_of_each_format(
    start_api: StartApi, clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    async with start_api(settings_for(database_url, scripted_openai, "grammar", "tool")) as api:
        await screened(api)
        await screened(api, formal=FORMAL.replace("add_zero_right", "t2"))
    async with start_api(settings_for(database_url, scripted_openai, "json", "json")) as api:
        await screened(api, formal=FORMAL.replace("add_zero_right", "t3"))
        response = await api.client.post("/v1/rescore", json={"all": True, "apply": True})
        assert response.status_code == 200, response.text
        run = response.json()
        async with api.runtime.sessions() as session:
            stored = await session.scalar(select(Rescore).where(Rescore.id == run["rescore_id"]))
    # Two grammar translators and two tool judges, one json translator and judge.
    readers = {"contract-4": 2, "json-1": 2, "tool-1": 2}
    assert (run["versions"]["parser"], run["readers"]) == ("contract-4", readers)
    assert stored is not None and stored.summary["readers"] == readers

    args = ["rescore", "--all", "--database-url", database_url]
    result = await asyncio.to_thread(CliRunner().invoke, cli, args)
    assert result.exit_code == 0, result.output
    assert "(replies read by contract-4 2, json-1 2, tool-1 2)" in result.stdout
