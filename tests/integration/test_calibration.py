"""Calibration over the API: labelled dev pairs screened by the real worker, replies
scripted per pair, every cell, rate and interval checked against values worked out by hand
(the Wilson bounds below were solved from the quadratic (p̂ - p)² = z² p (1 - p) / n,
z = 1.96, independently of app/reports/stats.py)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select

from app.models import Review, Screening
from tests.support.batches import (
    get_json,
    no_api_keys,  # noqa: F401 (an autouse fixture)
    post_batch,
    wait_batch_done,
)
from tests.support.calibration import (
    FAITHFUL,
    MISMATCH,
    UNCLEAR,
    UNREADABLE,
    Script,
    item,
    quiet_rows,
    scripted,
    server_default,
)
from tests.support.in_process_api import JUDGE_MODEL, TRANSLATOR_MODEL, Api
from tests.support.scripted_openai import ScriptedOpenAI

F, M = FAITHFUL, MISMATCH
# (translator, judge) per pair in batch A.
PLAN_A = {
    "M1": (M, F),  # flagged
    "M2": (F, M),  # flagged
    "M3": (F, F),  # passed: a false pass
    "M4": (UNREADABLE, F),  # needs_review: never read, never passed
    "M5": (F, F),  # passed: a false pass
    "M6": (F, F),  # passed: a false pass
    "F1": (F, F),
    "F2": (F, F),
    "F3": (F, F),
    "F4": (F, F),
    "F5": (M, F),  # flagged: a false flag
    "F6": (F, UNCLEAR),  # needs_review
    "U": (F, F),  # unlabelled
    "X": (F, F),  # labelled faithful here, mismatch in B
}
# Batch B: the same pairs under another configuration.
PLAN_B = {
    "M1": (M, F),
    "M2": (F, M),
    "M3": (M, F),  # now caught
    "M4": (M, F),  # now read, and caught
    "M5": (F, M),  # now caught
    "M6": (F, F),  # still a false pass
    "F1": (M, F),  # now a false flag
    "F2": (F, F),
    "F3": (F, F),
    "F4": (F, F),
    "F5": (F, F),  # now passed
    "F6": (F, F),  # now passed
    "X": (F, F),
    "O": (M, F),  # only in B
}


def rate(k: int, n: int, low: float, high: float) -> dict[str, Any]:
    return {"k": k, "n": n, "rate": pytest.approx(k / n), "low": low, "high": high}


def approx_rates(rates: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {
            **r,
            "low": pytest.approx(r["low"], abs=5e-5),
            "high": pytest.approx(r["high"], abs=5e-5),
        }
        for name, r in rates.items()
    }


def rows_by_name() -> dict[str, dict[str, Any]]:
    mismatch, faithful = quiet_rows("mismatch", 7), quiet_rows("faithful", 8)
    named = {f"M{i + 1}": row for i, row in enumerate(mismatch[:6])}
    named |= {f"F{i + 1}": row for i, row in enumerate(faithful[:6])}
    return named | {"U": faithful[6], "X": faithful[7], "O": mismatch[6]}


class CurrentScript:
    def __init__(self) -> None:
        self.script = Script({})

    def __call__(self) -> Script:
        return self.script


@pytest.fixture
def current(scripted_openai: ScriptedOpenAI) -> CurrentScript:
    holder = CurrentScript()
    scripted_openai.default = server_default(holder)
    return holder


def batch_a(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    half = {"M1", "M2", "M3", "F1", "F2", "F3"}
    items = []
    for name in PLAN_A:
        extra: dict[str, Any] = {"tags": ["half:1"] if name in half else []}
        if name == "U":
            extra["label"] = None
        items.append(item(rows[name], **extra))
    return items


def batch_b(rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [item(rows[name], **({"label": "mismatch"} if name == "X" else {})) for name in PLAN_B]


async def screen(api: Api, current: CurrentScript, plan: dict[str, Any], items: list[Any]) -> str:
    current.script = scripted(plan, rows_by_name())
    batch = await post_batch(api, items)
    await wait_batch_done(api, batch["id"])
    return str(batch["id"])


async def test_a_batch_calibration_counts_every_cell_and_rate_by_hand(
    api: Api, current: CurrentScript
) -> None:
    batch_id = await screen(api, current, PLAN_A, batch_a(rows_by_name()))
    body = await get_json(api, f"/v1/batches/{batch_id}/calibration")

    assert (body["labelled"], body["unlabelled"], body["pending"]) == (13, 1, 0)
    assert body["partial"] is False
    assert body["matrix"] == {
        "faithful": {"passed": 5, "flagged": 1, "needs_review": 1},
        "mismatch": {"passed": 3, "flagged": 2, "needs_review": 1},
    }
    assert body["rates"] == approx_rates(
        {
            "false_pass": rate(3, 6, 0.1876, 0.8124),
            "false_alarm": rate(2, 7, 0.0822, 0.6411),
            "false_flag": rate(1, 7, 0.0257, 0.5131),
            "flag_precision": rate(2, 3, 0.2077, 0.9385),
            "pass_precision": rate(5, 8, 0.3057, 0.8632),
            "automation": rate(11, 13, 0.5776, 0.9567),
        }
    )
    half = body["by_tag"]["half:1"]
    assert set(body["by_tag"]) == {"half:1"}
    assert half["labelled"] == 6
    assert half["matrix"] == {
        "faithful": {"passed": 3, "flagged": 0, "needs_review": 0},
        "mismatch": {"passed": 1, "flagged": 2, "needs_review": 0},
    }
    assert half["rates"]["false_pass"] == approx_rates({"r": rate(1, 3, 0.0615, 0.7923)})["r"]
    assert half["rates"]["false_alarm"] == {
        "k": 0,
        "n": 3,
        "rate": 0.0,
        "low": 0.0,
        "high": pytest.approx(0.5615, abs=5e-5),
    }
    # The unreadable translator and the unclear judge, each with its own reason.
    assert body["needs_review_reasons"] == {"judge_unclear": 1, "translator_missing": 1}


async def test_kinds_configs_and_cost_come_from_what_was_stored(
    api: Api, current: CurrentScript
) -> None:
    rows = rows_by_name()
    batch_id = await screen(api, current, PLAN_A, batch_a(rows))
    body = await get_json(api, f"/v1/batches/{batch_id}/calibration")

    kinds = {name: body["by_kind"][name]["labelled"] for name in ("theorem", "definition", "other")}
    assert sum(kinds.values()) == 13
    (config,) = body["configs"]
    assert config["translator_model"] == TRANSLATOR_MODEL
    assert config["judge_model"] == JUDGE_MODEL
    assert (config["count"], config["confirmations"]) == (13, 0)
    assert config["prompt_version"] and config["parser_version"] and config["policy_version"]

    async with api.runtime.sessions() as session:
        labelled = (Screening.batch_id == batch_id) & Screening.label.is_not(None)
        joined = select(func.count(Review.id)).join(Screening).where(labelled)
        calls = (await session.execute(joined)).scalar_one()
    cost = body["cost"]
    # 12 pairs of one translator and one judge call; M4's translator took 2 format retries.
    assert calls == 12 * 2 + 4
    assert cost["calls_per_screening"] == pytest.approx(calls / 13)
    assert cost["prompt_tokens_per_screening"] > 0
    assert cost["latency_p50_ms"] is not None


async def test_two_batches_compare_on_the_pairs_labelled_alike_in_both(
    api: Api, current: CurrentScript
) -> None:
    rows = rows_by_name()
    a = await screen(api, current, PLAN_A, batch_a(rows))
    b = await screen(api, current, PLAN_B, batch_b(rows))
    body = await get_json(api, f"/v1/calibrations/compare?a={a}&b={b}")

    # M1-M6 and F1-F6; X is labelled differently; U is unlabelled; O is in B only.
    assert (body["a"], body["b"], body["common"], body["label_conflicts"]) == (a, b, 12, 1)
    false_pass = body["rates"]["false_pass"]
    assert false_pass["a"] == approx_rates({"r": rate(3, 6, 0.1876, 0.8124)})["r"]
    assert false_pass["b"] == approx_rates({"r": rate(1, 6, 0.0301, 0.5635)})["r"]
    assert false_pass["difference"] == pytest.approx(-2 / 6)
    # M3 and M5 are passed under A alone; M6 under both.
    assert false_pass["discordant"] == {"a_only": 2, "b_only": 0}
    assert false_pass["p_value"] == pytest.approx(0.5)  # 2 x (1/2)^2
    false_alarm = body["rates"]["false_alarm"]
    # F5, F6 not passed under A alone; F1 under B alone: 2 x P(X <= 1 | 3, 1/2) = 1.
    assert false_alarm["discordant"] == {"a_only": 2, "b_only": 1}
    assert false_alarm["p_value"] == pytest.approx(1.0)
    assert (false_alarm["a"]["k"], false_alarm["b"]["k"], false_alarm["a"]["n"]) == (2, 1, 6)


async def test_no_common_pair_is_409_and_an_unknown_batch_404(
    api: Api, current: CurrentScript
) -> None:
    rows = rows_by_name()
    a = await screen(api, current, PLAN_A, [item(rows["M1"]), item(rows["F1"])])
    b = await screen(api, current, PLAN_B, [item(rows["M2"]), item(rows["F2"])])
    response = await api.client.get(f"/v1/calibrations/compare?a={a}&b={b}")
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "no_common_pairs"
    unknown = ("/v1/batches/nope/calibration", f"/v1/calibrations/compare?a={a}&b=nope")
    for path in (
        *unknown,
        "/v1/batches/a%00b/calibration",
        f"/v1/calibrations/compare?a={a}&b=%00",
    ):
        response = await api.client.get(path)
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"


async def test_a_calibration_is_partial_while_labelled_screenings_are_queued(
    idle_api: Api,
) -> None:
    rows = rows_by_name()
    batch = await post_batch(idle_api, [item(rows["M1"]), item(rows["U"], label=None)])
    body = await get_json(idle_api, f"/v1/batches/{batch['id']}/calibration")
    assert (body["labelled"], body["pending"], body["unlabelled"], body["partial"]) == (
        0,
        1,
        1,
        True,
    )
    assert body["rates"]["false_pass"] == {"k": 0, "n": 0, "rate": None, "low": None, "high": None}


async def test_the_comparison_is_computed_off_the_event_loop(
    api: Api, current: CurrentScript, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Tens of thousands of pairs take a while: the event loop's thread must stay free.
    import threading

    from app.calibration import service

    threads: list[threading.Thread] = []

    def compare_recording_its_thread(*judged: Any) -> Any:
        threads.append(threading.current_thread())
        return service_compare(*judged)

    service_compare = service.compare
    monkeypatch.setattr(service, "compare", compare_recording_its_thread)
    rows = rows_by_name()
    a = await screen(api, current, PLAN_A, batch_a(rows))
    b = await screen(api, current, PLAN_B, batch_b(rows))
    body = await get_json(api, f"/v1/calibrations/compare?a={a}&b={b}")
    assert body["common"] == 12
    assert len(threads) == 1 and threads[0] is not threading.current_thread()
