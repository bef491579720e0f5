"""A panel of three judges (FAITHSCREEN_JUDGES=a,b,c), each its own model on the scripted
provider: the worker asks every judge on its own client, each review names its judge, the
votes combine by the panel rule, supplied replies name each judge, re-scoring replays each
judge, and the calibration, the report and /metrics break the numbers down per judge."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.settings import Settings
from tests.support.in_process_api import (
    TRANSLATOR_MODEL,
    Api,
    StartApi,
    provider,
)
from tests.support.scripted_openai import Reply, ScriptedOpenAI, contract_reply

JUDGES = ("a", "b", "c")
INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem add_zero' (n : ℕ) : n + 0 = n := by sorry"
FAITHFUL = contract_reply("FAITHFUL")
MISMATCH = contract_reply("MISMATCH", issues="the bound is dropped")
JUDGE_FAITHFUL = contract_reply("FAITHFUL", back_translation=None)
JUDGE_MISMATCH = contract_reply("MISMATCH", back_translation=None, issues="wrong")
NO_VERDICT = "ISSUES: none\n"


def model_of(judge: str) -> str:
    return f"judge-{judge}-model"


@pytest.fixture
def panel_settings(clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI) -> Settings:
    url = scripted_openai.base_url
    return Settings(
        database_url=database_url,
        translator=provider(url, TRANSLATOR_MODEL),
        judges=",".join(JUDGES),
        panel_providers={name: provider(url, model_of(name)) for name in JUDGES},
        auth="off",
    )


@pytest.fixture
async def panel_api(start_api: StartApi, panel_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(panel_settings) as started:
        yield started


def body(**extra: Any) -> dict[str, Any]:
    return {"informal": INFORMAL, "formal": FORMAL, **extra}


async def submit(api: Api, payload: dict[str, Any]) -> str:
    response = await api.client.post("/v1/screenings", json=payload)
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    return screening_id


async def wait_done(api: Api, screening_id: str, within: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        response = await api.client.get(f"/v1/screenings/{screening_id}")
        found: dict[str, Any] = response.json()
        if found["status"] == "done":
            return found
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"screening {screening_id} not done in {within} s")


def script_judge(server: ScriptedOpenAI, judge: str, *replies: str) -> None:
    server.script(model=model_of(judge), steps=[Reply(reply) for reply in replies])


def calls_of(screening: dict[str, Any]) -> dict[str | None, list[tuple[int, str, str]]]:
    found: dict[str | None, list[tuple[int, str, str]]] = {}
    for review in screening["reviews"]:
        entry = (review["attempt"], review["purpose"], review["model"])
        found.setdefault(review["judge_name"], []).append(entry)
    return {name: sorted(calls) for name, calls in found.items()}


# ---- The worker: every judge on its own model ---------------------------------------------


async def test_every_judge_is_asked_on_its_own_model_and_its_reviews_name_it(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    screening = await wait_done(panel_api, await submit(panel_api, body()))

    assert screening["outcome"] == "passed", screening
    assert screening["judges"] == list(JUDGES)
    assert screening["panel_rule"] == "unanimous"
    assert screening["policy_version"] == "policy-4"
    assert calls_of(screening) == {
        None: [(1, "review", TRANSLATOR_MODEL)],
        **{name: [(1, "review", model_of(name))] for name in JUDGES},
    }
    asked = sorted(r.model or "" for r in scripted_openai.requests)
    assert asked == sorted([TRANSLATOR_MODEL, *(model_of(n) for n in JUDGES)])


async def test_unanimous_one_standing_mismatch_flags_naming_the_judge(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    script_judge(scripted_openai, "b", JUDGE_MISMATCH)
    screening = await wait_done(panel_api, await submit(panel_api, body()))
    assert (screening["outcome"], screening["reasons"]) == ("flagged", ["judge_mismatch:b"])


async def test_majority_a_lone_mismatch_costs_a_look_not_a_flag(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    script_judge(scripted_openai, "c", JUDGE_MISMATCH)
    payload = body(options={"panel_rule": "majority"})
    screening = await wait_done(panel_api, await submit(panel_api, payload))
    assert screening["panel_rule"] == "majority"
    assert screening["outcome"] == "needs_review"
    assert screening["reasons"] == ["panel_split", "judge_minority_mismatch:c"]
    item = (await panel_api.client.get("/v1/queue", params={"reason": "panel_split"})).json()
    assert [i["screening_id"] for i in item["items"]] == [screening["id"]]


async def test_majority_two_of_three_flag(panel_api: Api, scripted_openai: ScriptedOpenAI) -> None:
    script_judge(scripted_openai, "a", JUDGE_MISMATCH)
    script_judge(scripted_openai, "c", JUDGE_MISMATCH)
    payload = body(options={"panel_rule": "majority"})
    screening = await wait_done(panel_api, await submit(panel_api, payload))
    assert screening["outcome"] == "flagged"
    assert screening["reasons"] == ["judge_mismatch:a", "judge_mismatch:c"]


async def test_format_retries_and_confirmations_are_per_judge(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    script_judge(scripted_openai, "a", NO_VERDICT, JUDGE_FAITHFUL)
    script_judge(scripted_openai, "b", JUDGE_MISMATCH, JUDGE_FAITHFUL)
    payload = body(options={"confirmations": 1})
    screening = await wait_done(panel_api, await submit(panel_api, payload))

    calls = calls_of(screening)
    assert calls["a"] == [(1, "review", model_of("a")), (2, "format_retry", model_of("a"))]
    assert calls["b"] == [(1, "review", model_of("b")), (2, "confirmation", model_of("b"))]
    assert calls["c"] == [(1, "review", model_of("c"))]
    # b's mismatch was not confirmed: it needs review, and never passes.
    assert screening["outcome"] == "needs_review"
    assert screening["reasons"] == ["unconfirmed_judge_mismatch:b"]


async def test_an_unreadable_judge_is_never_outvoted(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    script_judge(scripted_openai, "b", NO_VERDICT, NO_VERDICT, NO_VERDICT)
    payload = body(options={"panel_rule": "majority"})
    screening = await wait_done(panel_api, await submit(panel_api, payload))
    assert (screening["outcome"], screening["reasons"]) == ("needs_review", ["judge_missing:b"])
    assert len(calls_of(screening)["b"]) == 3  # the review and two format retries


# ---- Supplied replies name each judge -----------------------------------------------------


def supplied(**judges: str) -> dict[str, Any]:
    return {"translator": FAITHFUL, "judges": judges}


async def test_supplied_replies_for_a_panel_are_decided_at_intake(panel_api: Api) -> None:
    replies = supplied(a=JUDGE_FAITHFUL, b=JUDGE_MISMATCH, c=JUDGE_FAITHFUL)
    screening_id = await submit(panel_api, body(replies=replies))
    screening = (await panel_api.client.get(f"/v1/screenings/{screening_id}")).json()
    assert (screening["outcome"], screening["reasons"]) == ("flagged", ["judge_mismatch:b"])
    assert {r["judge_name"] for r in screening["reviews"]} == {None, "a", "b", "c"}
    assert all(r["supplied"] for r in screening["reviews"])


@pytest.mark.parametrize(
    ("replies", "field"),
    [
        (supplied(a=JUDGE_FAITHFUL, b=JUDGE_FAITHFUL), "replies.judges.c"),
        (
            supplied(a=JUDGE_FAITHFUL, b=JUDGE_FAITHFUL, c=JUDGE_FAITHFUL, d=JUDGE_FAITHFUL),
            "replies.judges.d",
        ),
        ({"translator": FAITHFUL, "judge": JUDGE_FAITHFUL}, "replies.judge"),
    ],
)
async def test_panel_replies_that_do_not_fit_are_a_422_naming_the_field(
    panel_api: Api, replies: dict[str, Any], field: str
) -> None:
    response = await panel_api.client.post("/v1/screenings", json=body(replies=replies))
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_judges"
    assert field in error["message"]
    counts = await panel_api.row_counts()
    assert counts["screenings"] == 0


async def test_without_a_panel_judges_and_panel_rule_are_refused(idle_api: Api) -> None:
    refused = {
        "replies.judges": body(replies=supplied(a=JUDGE_FAITHFUL)),
        "options.panel_rule": body(options={"panel_rule": "majority"}),
    }
    for field, payload in refused.items():
        response = await idle_api.client.post("/v1/screenings", json=payload)
        assert response.status_code == 422, response.text
        assert field in response.json()["error"]["message"]


async def test_a_batch_item_that_does_not_fit_the_panel_is_named_by_index(panel_api: Api) -> None:
    good = body(replies=supplied(a=JUDGE_FAITHFUL, b=JUDGE_FAITHFUL, c=JUDGE_FAITHFUL))
    bad = body(replies=supplied(a=JUDGE_FAITHFUL, c=JUDGE_FAITHFUL))
    response = await panel_api.client.post("/v1/batches", json={"items": [good, bad]})
    assert response.status_code == 422, response.text
    details = response.json()["error"]["details"]
    assert [(d["index"], d["field"]) for d in details] == [(1, "replies.judges.b")]


# ---- Re-scoring, calibration, report, metrics ---------------------------------------------


LABELLED = [
    # (label, judge a, judge b, judge c)
    ("mismatch", JUDGE_MISMATCH, JUDGE_MISMATCH, JUDGE_FAITHFUL),
    ("mismatch", JUDGE_MISMATCH, JUDGE_FAITHFUL, NO_VERDICT),
    ("faithful", JUDGE_FAITHFUL, JUDGE_FAITHFUL, JUDGE_FAITHFUL),
    ("faithful", JUDGE_FAITHFUL, JUDGE_MISMATCH, JUDGE_FAITHFUL),
]


async def labelled_batch(api: Api, rule: str = "majority") -> str:
    items = [
        {
            "informal": f"{INFORMAL} ({i})",
            "formal": f"theorem t{i} (n : ℕ) : n + 0 = n := by sorry",
            "label": label,
            "options": {"panel_rule": rule},
            "replies": supplied(a=a, b=b, c=c),
        }
        for i, (label, a, b, c) in enumerate(LABELLED)
    ]
    response = await api.client.post("/v1/batches", json={"items": items})
    assert response.status_code == 202, response.text
    batch_id: str = response.json()["id"]
    return batch_id


async def test_rescoring_replays_each_judge_to_the_same_outcomes(panel_api: Api) -> None:
    batch_id = await labelled_batch(panel_api)
    response = await panel_api.client.post("/v1/rescore", json={"batch_id": batch_id})
    assert response.status_code == 200, response.text
    diff = response.json()
    counts = (diff["considered"], diff["changed"], diff["unchanged"], diff["restamped"])
    assert counts == (4, 0, 4, 0), diff
    assert (diff["skipped"], diff["incomplete"], diff["unversioned"]) == ({}, 0, 0)
    results = await panel_api.client.get(f"/v1/batches/{batch_id}/results")
    outcomes = [line["outcome"] for line in map(_json, results.text.splitlines())]
    assert outcomes == ["flagged", "needs_review", "passed", "needs_review"]


def _json(line: str) -> dict[str, Any]:
    import json

    parsed: dict[str, Any] = json.loads(line)
    return parsed


async def test_calibration_says_what_each_judge_caught(panel_api: Api) -> None:
    batch_id = await labelled_batch(panel_api)
    response = await panel_api.client.get(f"/v1/batches/{batch_id}/calibration")
    assert response.status_code == 200, response.text
    by_judge = response.json()["by_judge"]
    assert sorted(by_judge) == list(JUDGES)
    k_n = {
        name: {key: (v[key]["k"], v[key]["n"]) for key in ("catches", "faithful", "unreadable")}
        for name, v in by_judge.items()
    }
    assert k_n == {
        "a": {"catches": (2, 2), "faithful": (2, 2), "unreadable": (0, 4)},
        "b": {"catches": (1, 2), "faithful": (1, 2), "unreadable": (0, 4)},
        "c": {"catches": (0, 2), "faithful": (2, 2), "unreadable": (1, 4)},
    }
    assert by_judge["a"]["calls_per_pair"] == 1.0
    assert by_judge["a"]["models"] == ["supplied"]
    assert by_judge["a"]["catches"]["low"] is not None


async def test_the_report_and_metrics_break_down_per_judge(
    panel_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    await labelled_batch(panel_api)
    script_judge(scripted_openai, "b", JUDGE_MISMATCH)
    await wait_done(panel_api, await submit(panel_api, body()))

    report = (await panel_api.client.get("/v1/reports/summary")).json()
    judges = {j["judge"]: j for j in report["judges"]}
    assert sorted(judges) == list(JUDGES)
    assert judges["b"]["models"] == ["supplied", model_of("b")]
    assert (judges["c"]["screenings"], judges["c"]["calls"]) == (5, 5)
    assert judges["c"]["readings"]["unreadable"] == 1
    assert judges["a"]["timed_calls"] == 1
    agreement = report["panel_agreement"]
    # Every screening but the one where c's reply had no verdict: 4 of 5.
    assert agreement["n"] == 4
    assert set(agreement["pairs"]) == {"a/b", "a/c", "b/c"}
    assert agreement["fleiss_kappa"] is not None

    metrics = (await panel_api.client.get("/metrics")).text
    assert (
        f'faithscreen_judge_llm_calls{{judge="b",model="{model_of("b")}",'
        'parse_status="ok"} 1' in metrics
    )
    supplied_c = 'faithscreen_judge_llm_calls{judge="c",model="supplied",parse_status="missing"}'
    assert f"{supplied_c} 1" in metrics
    assert 'faithscreen_judge_llm_call_latency_seconds_count{judge="a"} 1' in metrics


async def test_readiness_lists_each_judge_of_the_panel(panel_api: Api) -> None:
    body = (await panel_api.client.get("/readyz")).json()
    assert body["providers"] == {
        "translator": "configured",
        "judge": "configured",
        **{f"judge:{name}": "configured" for name in JUDGES},
    }


async def test_a_worker_without_one_of_the_screenings_judges_records_its_calls_as_failed(
    start_api: StartApi, panel_settings: Settings
) -> None:
    """The panel is the one the screening was submitted under, not the worker's."""
    async with start_api(panel_settings, with_worker=False) as intake:
        screening_id = await submit(intake, body())
    fewer = panel_settings.model_copy(
        update={"judges": "a,b", "panel_providers": {
            name: panel_settings.panel_providers[name] for name in ("a", "b")
        }}
    )  # fmt: skip
    async with start_api(fewer) as worker:
        screening = await wait_done(worker, screening_id)
    assert screening["judges"] == list(JUDGES)
    assert screening["outcome"] == "needs_review"
    assert screening["reasons"] == ["judge_provider_error:c"]
    (failed,) = [r for r in screening["reviews"] if r["judge_name"] == "c"]
    assert failed["parse_status"] == "provider_error"
    assert "FAITHSCREEN_JUDGE_C_BASE_URL" in failed["error"]
