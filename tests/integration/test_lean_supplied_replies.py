"""Supplied replies go through Lean too (docs/lean.md), on SQLite and PostgreSQL: with
FAITHSCREEN_LEAN_SERVER_URL set, a screening whose replies the client supplied is queued
for the Lean check instead of being decided at intake; Lean's error flags it (lean_error)
and an unavailable Lean needs review (lean_unavailable) though both replies say FAITHFUL,
and only when Lean elaborates the pair do the supplied replies decide, as at intake. No
model is asked either way. Without the setting it is decided at intake, as before."""

from __future__ import annotations

from typing import Any

import pytest

from app.settings import Settings
from tests.integration.test_lean_checks import FORMAL, HEADER, INFORMAL, finished, kimina
from tests.integration.test_lean_checks import lean_settings as lean_settings
from tests.support.in_process_api import Api, StartApi
from tests.support.scripted_kimina import Recorded, ScriptedKimina
from tests.support.scripted_openai import ScriptedOpenAI, contract_reply

__all__ = ["kimina"]  # the fixture, shared with test_lean_checks

FAITHFUL = {
    "translator": contract_reply("FAITHFUL"),
    "judge": contract_reply("FAITHFUL", back_translation=None),
}


async def submit_supplied(api: Api, replies: dict[str, str] = FAITHFUL) -> dict[str, Any]:
    body = {"informal": INFORMAL, "formal": FORMAL, "header": HEADER, "replies": replies}
    response = await api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    accepted: dict[str, Any] = response.json()
    return accepted


CASES = {
    "error": ("unknown_identifier.json", "flagged", ["lean_error"], "error"),
    "timeout": ("timeout.json", "needs_review", ["lean_unavailable"], "timeout"),
    "repl_error": ("repl_error.json", "needs_review", ["lean_unavailable"], "unavailable"),
    "ok": ("sorry_goal.json", "passed", [], "ok"),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_supplied_replies_wait_for_lean_and_lean_decides_first(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    case: str,
) -> None:
    body, outcome, reasons, status = CASES[case]
    kimina.script_code("refl_int", [Recorded(body)])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        accepted = await submit_supplied(api)
        screening = await finished(api, accepted["id"])
    assert accepted["status"] != "done"  # queued for Lean, not decided at intake
    assert (screening["outcome"], screening["reasons"]) == (outcome, reasons)
    assert screening["policy_version"] == "policy-5"
    assert screening["lean_status"] == status
    assert len(kimina.checks) == 1
    assert scripted_openai.requests == []  # the supplied replies stand for the models
    assert {(r["role"], r["supplied"]) for r in screening["reviews"]} == {
        ("translator", True),
        ("judge", True),
    }


async def test_when_lean_elaborates_the_supplied_replies_decide_as_at_intake(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [Recorded("sorry_goal.json")])
    mismatch = {**FAITHFUL, "judge": contract_reply("MISMATCH", back_translation=None)}
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, (await submit_supplied(api, mismatch))["id"])
    assert (screening["outcome"], screening["reasons"]) == ("flagged", ["judge_mismatch"])
    assert (screening["lean_status"], screening["policy_version"]) == ("ok", "policy-5")
    assert scripted_openai.requests == []


async def test_without_the_setting_supplied_replies_are_decided_at_intake(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    settings: Settings = lean_settings(database_url, scripted_openai, None)
    async with start_api(settings) as api:
        accepted = await submit_supplied(api)
        screening = (await api.client.get(f"/v1/screenings/{accepted['id']}")).json()
    assert accepted["status"] == "done"
    assert (screening["outcome"], screening["policy_version"]) == ("passed", "policy-3")
    assert (screening["lean_status"], kimina.checks) == ("not_checked", [])


async def test_a_supplied_reply_that_does_not_read_is_never_asked_again_of_a_model(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    # A reply with no verdict: a provider's would be asked again (a format retry); a
    # supplied one has no provider, so it stands, exactly as intake rules it without Lean.
    unread = {**FAITHFUL, "translator": "I think it is fine."}
    kimina.script_code("refl_int", [Recorded("sorry_goal.json")])
    async with start_api(lean_settings(database_url, scripted_openai, None)) as api:
        at_intake = (
            await api.client.get(f"/v1/screenings/{(await submit_supplied(api, unread))['id']}")
        ).json()
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, (await submit_supplied(api, unread))["id"])
    assert at_intake["outcome"] == "needs_review"
    assert (screening["outcome"], screening["reasons"]) == (
        at_intake["outcome"],
        at_intake["reasons"],
    )
    assert scripted_openai.requests == []
    assert len(screening["reviews"]) == 2
