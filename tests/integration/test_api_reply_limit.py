"""Supplied replies are capped at FAITHSCREEN_MAX_REPLY_BYTES (UTF-8 bytes) each: a 413
naming `replies.translator` or `replies.judge`, and in a batch the item by index."""

from __future__ import annotations

import pytest

from app.settings import Settings
from tests.integration.test_api_errors import GOOD, REPLIES, rejected
from tests.support.in_process_api import Api, StartApi

DEFAULT_REPLY_LIMIT = 256 * 1024


@pytest.mark.parametrize("role", ["translator", "judge"])
async def test_a_reply_over_the_limit_in_utf8_bytes_is_a_413(idle_api: Api, role: str) -> None:
    # 87,382 characters, 262,146 bytes: a count of characters would let it through.
    replies = REPLIES | {role: "ℕ" * (DEFAULT_REPLY_LIMIT // 3 + 1)}
    error = await rejected(idle_api, 413, url="/v1/screenings", json=GOOD | {"replies": replies})
    assert error["code"] == "payload_too_large" and error["limit"] == DEFAULT_REPLY_LIMIT
    assert f"replies.{role}" in error["message"]
    assert "FAITHSCREEN_MAX_REPLY_BYTES" in error["message"]


async def test_a_reply_of_exactly_the_limit_is_accepted(idle_api: Api) -> None:
    replies = REPLIES | {"judge": "VERDICT: FAITHFUL\n".ljust(DEFAULT_REPLY_LIMIT)}
    response = await idle_api.client.post("/v1/screenings", json=GOOD | {"replies": replies})
    assert response.status_code == 202, response.text


async def test_the_reply_limit_is_configurable(
    start_api: StartApi, configured_settings: Settings
) -> None:
    settings = configured_settings.model_copy(update={"max_reply_bytes": 100})
    async with start_api(settings, with_worker=False) as api:
        body = GOOD | {"replies": REPLIES | {"translator": "x" * 101}}
        error = await rejected(api, 413, url="/v1/screenings", json=body)
        assert "100 bytes" in error["message"]
        body = GOOD | {"replies": REPLIES | {"translator": "x" * 100}}
        assert (await api.client.post("/v1/screenings", json=body)).status_code == 202


async def test_a_batch_item_with_a_reply_over_the_limit_is_named_by_index(idle_api: Api) -> None:
    too_big = "V" * (DEFAULT_REPLY_LIMIT + 1)
    items = [
        GOOD | {"replies": REPLIES},
        GOOD | {"formal": "theorem u : 1 = 1", "replies": REPLIES | {"judge": too_big}},
    ]
    error = await rejected(idle_api, 422, url="/v1/batches", json={"items": items})
    assert error["code"] == "invalid_items"
    [detail] = error["details"]
    assert (detail["index"], detail["field"], detail["code"]) == (
        1,
        "replies.judge",
        "payload_too_large",
    )
    assert "FAITHSCREEN_MAX_REPLY_BYTES" in detail["message"]
