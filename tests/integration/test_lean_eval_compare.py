"""Calibration compares a config with and without the elaborated Lean goal in the prompt
(issue 34, item 4: `eval compare`), on SQLite and PostgreSQL. The same labelled pairs are
run twice against the scripted provider: once without a Lean server (prompts-2), once with
the scripted Kimina answering each pair's goal (prompts-2+lean-goal-1). The provider says
MISMATCH to the mismatch pair only when it sees the goal, so the goal catches a false pass:
GET /v1/calibrations/compare and its text report (`faithscreen eval compare`) give both
runs, each with its prompt version, and the pair B gets right that A got wrong."""

from __future__ import annotations

from typing import Any

from app.calibration.text import comparison_text
from app.settings import LeanSettings, Settings
from tests.integration.test_lean_checks import kimina
from tests.support.batches import (
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    wait_batch_done,
)
from tests.support.in_process_api import StartApi
from tests.support.scripted_kimina import ScriptedKimina
from tests.support.scripted_openai import (
    FAITHFUL_REPLY,
    RecordedRequest,
    Reply,
    ScriptedOpenAI,
    contract_reply,
)

__all__ = ["kimina"]  # the fixture, shared with test_lean_checks

# n -> label; pair 2 is the mismatch a model catches only with the goal beside it.
LABELS = {1: "faithful", 2: "mismatch", 3: "faithful"}
GOAL_FENCE = "lean_elaborated_goal"


def sees_the_goal(request: RecordedRequest) -> Reply:
    caught = GOAL_FENCE in request.text and "add_comm_2 " in request.text
    return Reply(contract_reply("MISMATCH") if caught else FAITHFUL_REPLY)


async def run(start_api: StartApi, settings: Settings, name: str) -> str:
    items = [queued_item(n, label=label) for n, label in LABELS.items()]
    async with start_api(settings) as api:
        batch = await post_batch(api, items, name=name)
        await wait_batch_done(api, batch["id"])
    return str(batch["id"])


async def test_eval_compare_reports_the_runs_with_and_without_the_goal_and_their_prompts(
    start_api: StartApi,
    configured_settings: Settings,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
) -> None:
    scripted_openai.default = sees_the_goal
    plain = configured_settings.model_copy(update={"audit_rate": 0.0})
    with_lean = plain.model_copy(update={"lean": LeanSettings(server_url=kimina.base_url)})
    a = await run(start_api, plain, "without-goal")
    b = await run(start_api, with_lean, "with-goal")
    async with start_api(plain) as api:
        response = await api.client.get("/v1/calibrations/compare", params={"a": a, "b": b})
        assert response.status_code == 200, response.text
        compared: dict[str, Any] = response.json()
        by_name = await api.client.get(
            "/v1/calibrations/compare", params={"a": "without-goal", "b": "with-goal"}
        )
    assert len(kimina.checks) == len(LABELS)  # only B's run asked Lean
    assert (compared["a"], compared["b"], compared["common"]) == (a, b, 3)
    assert compared["prompt_versions"] == {a: ["prompts-2"], b: ["prompts-2+lean-goal-1"]}
    false_pass = compared["rates"]["false_pass"]
    assert (false_pass["a"]["k"], false_pass["b"]["k"]) == (1, 0)
    assert false_pass["discordant"] == {"a_only": 1, "b_only": 0}
    assert by_name.json() == compared
    text = comparison_text(compared, {a: "without-goal", b: "with-goal"})
    assert "prompts: A prompts-2; B prompts-2+lean-goal-1" in text.splitlines()
