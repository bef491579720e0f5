"""A model marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false), through the API and the
worker on the scripted provider, on SQLite and PostgreSQL: its replies are stored, read and
shown as usual, its MISMATCH still flags, its FAITHFUL never passes a pair; each review
records the flag, and a re-score replays the recorded flag, not today's setting."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from app.calibration.html import calibration_page
from app.calibration.text import calibration_text
from app.settings import ProviderSettings, Settings
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi, provider
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem add_zero' (n : ℕ) : n + 0 = n := by sorry"
MISMATCH = contract_reply("MISMATCH", issues="the statement says something else")


def settings_of(
    database_url: str, url: str, *, translator: bool = True, judge: bool = True
) -> Settings:
    return Settings(
        database_url=database_url,
        translator=_marked(provider(url, TRANSLATOR_MODEL), translator),
        judge=_marked(provider(url, JUDGE_MODEL), judge),
        auth="off",
    )


def _marked(settings: ProviderSettings, evidential: bool) -> ProviderSettings:
    return settings.model_copy(update={"evidential": evidential})


async def screen(api: Api, informal: str = INFORMAL, within: float = 120.0) -> dict[str, Any]:
    response = await api.client.post(
        "/v1/screenings", json={"informal": informal, "formal": FORMAL}
    )
    assert response.status_code == 202, response.text
    screening_id = response.json()["id"]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found: dict[str, Any] = (await api.client.get(f"/v1/screenings/{screening_id}")).json()
        if found["status"] == "done":
            return found
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} not done in {within} s")


def shown(screening: dict[str, Any]) -> dict[str, tuple[str, str, bool]]:
    return {
        review["role"]: (review["parse_status"], review["verdict"], review["evidential"])
        for review in screening["reviews"]
    }


async def test_a_faithful_from_a_translator_that_is_not_evidence_needs_review(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    settings = settings_of(database_url, scripted_openai.base_url, translator=False)
    async with start_api(settings) as api:
        screening = await screen(api)
    assert (screening["outcome"], screening["reasons"]) == (
        "needs_review",
        ["translator_non_evidential"],
    )
    # Read and shown as usual: an ok FAITHFUL, recorded as not evidential.
    assert shown(screening) == {
        "translator": ("ok", "faithful", False),
        "judge": ("ok", "faithful", True),
    }
    assert screening["policy_version"] == "policy-3"
    # The reviewer's page says which model was not evidential.
    async with start_api(settings) as api:
        item = (await api.client.get("/v1/queue")).json()["items"][0]
        page = (await api.client.get(f"/review/items/{item['id']}")).text
    assert page.count("model marked not evidential") == 1


async def test_a_judge_that_is_not_evidence_still_flags_with_its_mismatch(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=JUDGE_MODEL, steps=[Reply(MISMATCH)])
    settings = settings_of(database_url, scripted_openai.base_url, judge=False)
    async with start_api(settings) as api:
        flagged = await screen(api)
        held = await screen(api, informal=f"{INFORMAL} (again)")
    assert (flagged["outcome"], flagged["reasons"]) == ("flagged", ["judge_mismatch"])
    assert (held["outcome"], held["reasons"]) == ("needs_review", ["judge_non_evidential"])
    assert shown(held)["judge"] == ("ok", "faithful", False)


async def test_a_panel_judge_that_is_not_evidence_keeps_the_pair_from_passing(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    url = scripted_openai.base_url
    judges = {name: provider(url, f"judge-{name}-model") for name in ("a", "b", "c")}
    judges["c"] = _marked(judges["c"], False)
    panel = Settings(
        database_url=database_url,
        translator=provider(url, TRANSLATOR_MODEL),
        judges="a,b,c",
        panel_providers=judges,
        auth="off",
    )
    async with start_api(panel) as api:
        screening = await screen(api)
    assert (screening["outcome"], screening["reasons"]) == (
        "needs_review",
        ["judge_non_evidential:c"],
    )
    flags = {r["judge_name"]: r["evidential"] for r in screening["reviews"] if r["judge_name"]}
    assert flags == {"a": True, "b": True, "c": False}
    assert screening["policy_version"] == "policy-4"


async def rescore_all(api: Api) -> dict[str, Any]:
    response = await api.client.post("/v1/rescore", json={"all": True, "apply": True})
    assert response.status_code == 200, response.text
    diff: dict[str, Any] = response.json()
    return diff


async def test_a_rescore_replays_the_recorded_flag_not_todays_setting(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    url = scripted_openai.base_url
    async with start_api(settings_of(database_url, url, translator=False)) as api:
        held = await screen(api)
    async with start_api(settings_of(database_url, url)) as api:
        passed = await screen(api, informal=f"{INFORMAL} (every model evidence)")
    assert (held["outcome"], passed["outcome"]) == ("needs_review", "passed")
    # Today the flags are the other way round: the re-score must rule each screening as it
    # was screened (read from its reviews), so neither moves.
    today = settings_of(database_url, url, judge=False)
    async with start_api(today) as api:
        diff = await rescore_all(api)
        after = [(await api.client.get(f"/v1/screenings/{s['id']}")).json() for s in (held, passed)]
    assert (diff["considered"], diff["changed"], diff["unversioned"]) == (2, 0, 0), diff
    assert [(s["outcome"], s["reasons"]) for s in after] == [
        ("needs_review", ["translator_non_evidential"]),
        ("passed", []),
    ]


async def test_the_calibration_says_which_model_was_not_evidence(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    items = [
        {
            "informal": f"{INFORMAL} ({i})",
            "formal": f"theorem t{i} (n : ℕ) : n + 0 = n := by sorry",
            "label": label,
        }
        for i, label in enumerate(("faithful", "mismatch", "mismatch"))
    ]
    settings = settings_of(database_url, scripted_openai.base_url, translator=False)
    async with start_api(settings) as api:
        response = await api.client.post("/v1/batches", json={"items": items})
        assert response.status_code == 202, response.text
        batch_id = response.json()["id"]
        body = await calibration_when_done(api, batch_id)
    # Every reply said FAITHFUL, the mismatches too: none of them passed.
    assert body["matrix"]["mismatch"]["passed"] == 0
    assert body["needs_review_reasons"] == {"translator_non_evidential": 3}
    assert body["non_evidential"] == {"translator": 3}
    line = "NOT EVIDENTIAL: models marked not evidential (FAITHSCREEN_*_EVIDENTIAL=false)"
    assert f"{line}, screenings: translator in 3;" in calibration_text(body)
    assert f'<p class="warning">{line}' in calibration_page(body)


async def test_a_calibration_of_evidential_models_says_nothing_of_it(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    item = {"informal": INFORMAL, "formal": FORMAL, "label": "faithful"}
    async with start_api(settings_of(database_url, scripted_openai.base_url)) as api:
        response = await api.client.post("/v1/batches", json={"items": [item]})
        body = await calibration_when_done(api, response.json()["id"])
    assert body["non_evidential"] == {}
    assert "NOT EVIDENTIAL" not in calibration_text(body)
    assert "NOT EVIDENTIAL" not in calibration_page(body)


async def calibration_when_done(api: Api, batch_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        response = await api.client.get(f"/v1/batches/{batch_id}/calibration")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        if not body["partial"] and body["labelled"]:
            return body
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"batch {batch_id} not done in {within} s")
