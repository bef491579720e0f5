"""Calibration by a batch's name over the API (issue 35, item 4): a name is taken wherever
an id is, an id wins over a name, a name several batches share is refused with their ids
rather than guessed, and a name never slips past the blind-review refusal. On SQLite and
PostgreSQL (the `api` and `blind` fixtures run on both)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from app.settings import Settings
from tests.integration.test_calibration import (
    PLAN_A,
    PLAN_B,
    CurrentScript,
    batch_a,
    batch_b,
    rows_by_name,
)
from tests.integration.test_review_blind import FLAGGED, Blind, keys, start_blind
from tests.support.batches import (
    get_json,
    no_api_keys,  # noqa: F401 (an autouse fixture)
    post_batch,
    wait_batch_done,
)
from tests.support.calibration import scripted, server_default
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import error_code, pair
from tests.support.scripted_openai import ScriptedOpenAI


# The fixtures of test_calibration.py and test_review_blind.py, under names of this file's.
@pytest.fixture
def current(scripted_openai: ScriptedOpenAI) -> CurrentScript:
    holder = CurrentScript()
    scripted_openai.default = server_default(holder)
    return holder


@pytest.fixture
async def blind(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Blind]:
    async with await start_blind(start_api, unconfigured_settings) as api:
        yield await keys(api)


async def screen_named(
    api: Api, current: CurrentScript, plan: dict[str, Any], items: list[Any], name: str
) -> str:
    current.script = scripted(plan, rows_by_name())
    batch = await post_batch(api, items, name=name)
    await wait_batch_done(api, batch["id"])
    return str(batch["id"])


async def test_batches_are_found_by_name_and_a_shared_name_lists_its_ids(
    api: Api, current: CurrentScript
) -> None:
    rows = rows_by_name()
    a = await screen_named(api, current, PLAN_A, batch_a(rows), "baseline")
    b = await screen_named(api, current, PLAN_B, batch_b(rows), "candidate")

    by_name = await get_json(api, "/v1/calibrations/compare?a=baseline&b=candidate")
    by_id = await get_json(api, f"/v1/calibrations/compare?a={a}&b={b}")
    assert (by_name["a"], by_name["b"]) == (a, b) and by_name == by_id
    assert (await get_json(api, "/v1/batches/candidate/calibration"))["batch_id"] == b

    # A batch named like another batch's id: the id wins.
    impostor = await screen_named(api, current, PLAN_B, batch_b(rows), a)
    assert (await get_json(api, f"/v1/batches/{a}/calibration"))["batch_id"] == a
    assert (await get_json(api, f"/v1/batches/{impostor}/calibration"))["batch_id"] == impostor

    # A second "baseline": refused, naming both, never a guess.
    again = await screen_named(api, current, PLAN_A, batch_a(rows), "baseline")
    for path in (
        "/v1/batches/baseline/calibration",
        "/v1/calibrations/compare?a=baseline&b=candidate",
    ):
        response = await api.client.get(path)
        assert error_code(response, 409) == "ambiguous_batch_name"
        message = response.json()["error"]["message"]
        assert a in message and again in message and b not in message
    response = await api.client.get("/v1/batches/nameless/calibration")
    assert error_code(response, 404) == "not_found"


async def test_a_name_is_refused_like_its_id_while_a_pair_is_blind(blind: Blind) -> None:
    items = [pair(13, "needs_review"), pair(14, "passed", label="mismatch") | {"replies": FLAGGED}]
    response = await blind.post(blind.bot, "/v1/batches", {"items": items, "name": "hidden"})
    assert response.status_code == 202, response.text
    calibration = await blind.get(blind.alice, "/v1/batches/hidden/calibration")
    assert error_code(calibration, 403) == "blind_item"
    compared = await blind.get(blind.alice, "/v1/calibrations/compare", a="hidden", b="hidden")
    assert error_code(compared, 403) == "blind_item"
    whole = await blind.get(blind.admin, "/v1/batches/hidden/calibration")
    assert whole.status_code == 200 and whole.json()["batch_id"] == response.json()["id"]
