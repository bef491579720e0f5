"""The Lean checker (issue 34) through the API and the worker, on SQLite and PostgreSQL,
against a scripted Kimina Lean Server replaying recorded answers (tests/data/kimina) and
the scripted OpenAI-compatible provider: a pair Lean does not elaborate is flagged with no
LLM call; one it elaborates reaches the models with its goal in the prompt; every hostile
answer is fail-closed; without the setting nothing changes."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from app.lean import LeanClient
from app.pipeline.lean_step import LeanStep
from app.settings import LeanSettings, Settings
from app.vocabulary import LeanStatus, Pair
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api, StartApi, provider
from tests.support.scripted_kimina import Recorded, ScriptedKimina, recorded, too_busy
from tests.support.scripted_openai import HttpError, RawBody, ScriptedOpenAI, contract_reply

INFORMAL = "For every integer x, x = x."
FORMAL = "theorem refl_int (x : Int) : x = x := by sorry"
HEADER = "import Mathlib"


@pytest.fixture
def kimina() -> Iterator[ScriptedKimina]:
    with ScriptedKimina() as server:
        yield server


def lean_settings(
    database_url: str, openai: ScriptedOpenAI, lean_url: str | None, **lean: Any
) -> Settings:
    return Settings(
        database_url=database_url,
        translator=provider(openai.base_url, TRANSLATOR_MODEL),
        judge=provider(openai.base_url, JUDGE_MODEL),
        lean=LeanSettings(server_url=lean_url, **lean),
        auth="off",
    )


async def submit(api: Api, formal: str = FORMAL) -> str:
    body = {"informal": INFORMAL, "formal": formal, "header": HEADER}
    response = await api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


async def finished(api: Api, screening_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found: dict[str, Any] = (await api.client.get(f"/v1/screenings/{screening_id}")).json()
        if found["status"] == "done":
            return found
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} not done in {within} s")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("unknown_identifier.json", (1, 7, "Unknown identifier `g`")),
        ("type_mismatch.json", (1, 0, "(kernel) application type mismatch")),
    ],
)
async def test_a_pair_lean_does_not_elaborate_is_flagged_with_no_llm_call(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    body: str,
    message: tuple[int, int, str],
) -> None:
    kimina.script_code("refl_int", [Recorded(body)])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
    assert (screening["outcome"], screening["reasons"]) == ("flagged", ["lean_error"])
    assert screening["policy_version"] == "policy-5"
    assert scripted_openai.requests == []  # no model was asked
    assert screening["reviews"] == []
    check = screening["lean_check"]
    assert screening["lean_status"] == check["status"] == "error"
    first = check["messages"][0]
    assert (first["severity"], first["line"], first["column"]) == ("error", *message[:2])
    assert first["data"].startswith(message[2])
    # Stored byte for byte as received, with the server's URL and version.
    sent = recorded(body).replace("SNIPPET_ID", screening["id"])
    assert check["raw_body"] == sent
    assert (check["server_url"], check["server_version"]) == (kimina.base_url, "2.0.0")
    # What was sent: Kimina's request shape, header then formal, reusing a REPL.
    (request,) = kimina.checks
    assert request.json == {
        "snippets": [{"id": screening["id"], "code": f"{HEADER}\n{FORMAL}"}],
        "timeout": 60,
        "reuse": True,
        "debug": False,
    }
    assert check["code"] == f"{HEADER}\n{FORMAL}"


@pytest.mark.parametrize("body", ["sorry_goal.json", "sorry_warning_only.json"])
async def test_a_pair_that_elaborates_reaches_the_models_with_its_goal(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    body: str,
) -> None:
    kimina.script_code("refl_int", [Recorded(body)])
    goal = "x : Int\n⊢ x = x" if body == "sorry_goal.json" else "⊢ False"
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
    # A warning (`declaration uses sorry`) is not an error: the models decide.
    assert (screening["outcome"], screening["reasons"]) == ("passed", [])
    assert screening["policy_version"] == "policy-5"
    assert screening["lean_status"] == "ok"
    assert screening["lean_check"]["goal"] == goal
    requests = scripted_openai.requests
    assert {r.model for r in requests} == {TRANSLATOR_MODEL, JUDGE_MODEL}
    for request in requests:
        user = request.json["messages"][1]["content"]
        statement_end = user.index("</lean_statement_")
        goal_at = user.index(f">\n{goal}\n</lean_elaborated_goal_")
        assert statement_end < goal_at  # fenced, right after the statement
    assert {r["prompt_version"].endswith("+lean-goal-1") for r in screening["reviews"]} == {True}


HOSTILE = {
    "timeout": ([Recorded("timeout.json")], "timeout"),
    "repl_error": ([Recorded("repl_error.json")], "unavailable"),
    "not_json": ([RawBody(recorded("not_json.html"), content_type="text/html")], "unavailable"),
    "busy_after_retries": ([too_busy() for _ in range(4)], "unavailable"),
    "server_error": ([HttpError(500, "Internal Server Error")] * 4, "unavailable"),
    "empty_results": ([RawBody('{"results":[]}')], "unavailable"),
    # An answer that elaborates, padded past the client's 1 MiB cap: never read as ok.
    "too_large": (
        [Recorded("sorry_goal.json", ('{"results"', "{" + " " * 1024 * 1024 + '"results"'))],
        "unavailable",
    ),
    "unknown_severity": (
        [Recorded("unknown_identifier.json", ('"severity":"error"', '"severity":"fatal"'))],
        "unavailable",
    ),
    "another_snippet": (
        [Recorded("unknown_identifier.json", ('"SNIPPET_ID"', '"someone-else"'))],
        "unavailable",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
async def test_every_hostile_answer_needs_review_and_asks_no_model(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    case: str,
) -> None:
    steps, status = HOSTILE[case]
    kimina.script_code("refl_int", steps)
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
    assert (screening["outcome"], screening["reasons"]) == ("needs_review", ["lean_unavailable"])
    assert screening["lean_status"] == status
    assert scripted_openai.requests == []
    # Bounded: a 429 or a 500 is asked 1 + 3 times, then given up.
    assert len(kimina.checks) == (4 if case in {"busy_after_retries", "server_error"} else 1)


async def test_a_wrong_key_and_an_unreachable_server_need_review(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI
) -> None:
    with ScriptedKimina(api_key="right-key") as guarded:
        settings = lean_settings(
            database_url, scripted_openai, guarded.base_url, server_api_key="wrong-key"
        )
        async with start_api(settings) as api:
            refused = await finished(api, await submit(api))
        gone = guarded.base_url
    assert refused["lean_check"]["http_status"] == 401
    assert "wrong-key" not in str(refused)
    async with start_api(lean_settings(database_url, scripted_openai, gone)) as api:
        unreachable = await finished(api, await submit(api, FORMAL + " "))
    for screening in (refused, unreachable):
        assert (screening["outcome"], screening["reasons"]) == (
            "needs_review",
            ["lean_unavailable"],
        )
        assert screening["lean_status"] == "unavailable"
    assert unreachable["lean_check"]["error"].startswith("connection error after 4 attempts")
    assert scripted_openai.requests == []


async def test_a_busy_server_is_asked_again_and_then_answers(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [too_busy(), Recorded("sorry_goal.json")])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
    assert (screening["outcome"], screening["lean_status"]) == ("passed", "ok")
    assert screening["lean_check"]["attempts"] == 2
    assert len(scripted_openai.requests) == 2


async def test_a_long_retry_after_puts_the_job_back_like_a_provider(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [HttpError(429, "{}", headers={"Retry-After": "3600"})])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening_id = await submit(api)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = (await api.client.get(f"/v1/screenings/{screening_id}")).json()
            if found["error"]:
                break
            await asyncio.sleep(0.05)
    assert found["status"] == "queued"  # put back, not decided
    assert "provider asked to wait 3600 s (capped at 300 s): the Lean server" in found["error"]
    assert found["lean_status"] == "not_checked"  # nothing stored: it is asked again later
    assert scripted_openai.requests == []


async def test_checks_in_flight_keep_to_the_cap(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.latency = 0.2  # each check holds the server a while (fallback answers only)
    settings = lean_settings(database_url, scripted_openai, kimina.base_url, max_in_flight=1)
    async with start_api(settings) as api:
        ids = [await submit(api, FORMAL.replace("refl_int", f"t{n}")) for n in range(4)]
        done = [await finished(api, screening_id) for screening_id in ids]
    assert {s["lean_status"] for s in done} == {"ok"}
    assert kimina.max_in_flight == 1


async def test_without_the_setting_nothing_is_checked(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    async with start_api(lean_settings(database_url, scripted_openai, None)) as api:
        screening = await finished(api, await submit(api))
    assert (screening["outcome"], screening["policy_version"]) == ("passed", "policy-3")
    assert (screening["lean_status"], screening["lean_check"]) == ("not_checked", None)
    assert kimina.checks == []
    assert all("lean_elaborated_goal" not in r.text for r in scripted_openai.requests)
    assert {r["prompt_version"] for r in screening["reviews"]} == {"prompts-2"}


async def test_a_rescore_replays_the_stored_lean_answer_and_a_report_counts_the_saving(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [Recorded("unknown_identifier.json")])
    kimina.script_code("lost", [Recorded("timeout.json")])
    settings = lean_settings(database_url, scripted_openai, kimina.base_url)
    async with start_api(settings) as api:
        flagged = await finished(api, await submit(api))
        lost = await finished(api, await submit(api, FORMAL.replace("refl_int", "lost")))
        passed = await finished(api, await submit(api, FORMAL.replace("refl_int", "fine")))
        asked = len(kimina.checks)
        report = (await api.client.get("/v1/reports/summary")).json()
        response = await api.client.post("/v1/rescore", json={"all": True, "apply": True})
        assert response.status_code == 200, response.text
        diff = response.json()
        again = [
            (await api.client.get(f"/v1/screenings/{s['id']}")).json()
            for s in (flagged, lost, passed)
        ]
    assert [s["outcome"] for s in (flagged, lost, passed)] == ["flagged", "needs_review", "passed"]
    # Each is replayed (none skipped for lacking model calls) to the same ruling, policy-5.
    assert (diff["considered"], diff["unchanged"], diff["skipped"]) == (3, 3, {})
    assert [s["outcome"] for s in again] == ["flagged", "needs_review", "passed"]
    assert {s["policy_version"] for s in again} == {"policy-5"}
    assert len(kimina.checks) == asked  # Lean was not asked again
    # The report counts what Lean saved: two screenings stopped, no model asked for them.
    assert report["lean"] == {
        "lean_error": 1,
        "lean_unavailable": 1,
        "stopped": 2,
        "llm_calls_saved_at_least": 4,
    }
    assert report["reasons"]["lean_error"] == report["reasons"]["lean_unavailable"] == 1


async def test_the_decisions_export_carries_the_lean_check(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [Recorded("unknown_identifier.json")])
    settings = lean_settings(database_url, scripted_openai, kimina.base_url).model_copy(
        update={"audit_rate": 1.0, "review_blind": "off"}
    )
    async with start_api(settings) as api:
        flagged = await finished(api, await submit(api))
        passed = await finished(api, await submit(api, FORMAL.replace("refl_int", "fine")))
        items = (await api.client.get("/v1/queue")).json()["items"]
        for item in items:
            await api.client.post(f"/v1/queue/{item['id']}/claim")
            decided = await api.client.post(
                f"/v1/queue/{item['id']}/decision", json={"decision": "mismatch", "note": "x"}
            )
            assert decided.status_code == 201, decided.text
        export = (await api.client.get("/v1/decisions/export")).text
        table = (await api.client.get("/v1/decisions/export", params={"format": "csv"})).text
    lines = {r["screening_id"]: r for r in map(json.loads, export.splitlines())}
    assert (lines[flagged["id"]]["lean_status"], lines[flagged["id"]]["lean_errors"]) == (
        "error",
        ["1:7: Unknown identifier `g`"],
    )
    assert (lines[passed["id"]]["lean_status"], lines[passed["id"]]["lean_goal"]) == (
        "ok",
        "x : Int\n⊢ x = x",
    )
    assert table.splitlines()[0].endswith("lean_status,lean_goal,lean_errors,lean_reader_version")


STATEMENTS = {
    "update": "UPDATE lean_checks SET status = 'ok'",
    "update_body": "UPDATE lean_checks SET raw_body = 'forged'",
    "delete": "DELETE FROM lean_checks",
    "replace": "INSERT OR REPLACE INTO lean_checks SELECT * FROM lean_checks",  # SQLite only
    "truncate": "TRUNCATE lean_checks",  # PostgreSQL only
}


@pytest.mark.parametrize("statement", sorted(STATEMENTS))
async def test_a_stored_check_is_append_only_in_the_database(
    start_api: StartApi,
    database_url: str,
    scripted_openai: ScriptedOpenAI,
    kimina: ScriptedKimina,
    statement: str,
) -> None:
    postgres = database_url.startswith("postgresql")
    if (statement == "replace" and postgres) or (statement == "truncate" and not postgres):
        pytest.skip("not a statement of this database")
    kimina.script_code("refl_int", [Recorded("unknown_identifier.json")])
    async with start_api(lean_settings(database_url, scripted_openai, kimina.base_url)) as api:
        screening = await finished(api, await submit(api))
        async with api.runtime.sessions() as session:
            with pytest.raises(sa.exc.DBAPIError, match="append-only"):
                await session.execute(sa.text(STATEMENTS[statement]))
            await session.rollback()
        after = (await api.client.get(f"/v1/screenings/{screening['id']}")).json()
    assert after["lean_check"] == screening["lean_check"]


async def test_a_screening_run_again_reads_its_stored_check_and_asks_lean_once(
    start_api: StartApi, database_url: str, scripted_openai: ScriptedOpenAI, kimina: ScriptedKimina
) -> None:
    kimina.script_code("refl_int", [Recorded("unknown_identifier.json")])
    settings = lean_settings(database_url, scripted_openai, None)  # no Lean in this runtime
    replies = {"translator": contract_reply(), "judge": contract_reply(back_translation=None)}
    body = {"informal": INFORMAL, "formal": FORMAL, "header": HEADER, "replies": replies}
    async with start_api(settings, with_worker=False) as api:
        screening_id = (await api.client.post("/v1/screenings", json=body)).json()["id"]
        step = LeanStep(api.runtime.sessions, LeanClient(LeanSettings(server_url=kimina.base_url)))
        try:
            pair = Pair(INFORMAL, FORMAL, HEADER)
            first = await step.check(screening_id, pair)
            again = await step.check(screening_id, pair)  # as after a crash: stored already
        finally:
            await step.aclose()
    assert first == again
    assert first.status is LeanStatus.ERROR
    assert len(kimina.checks) == 1
