"""A provider's error body is stored and shown with credentials redacted: through the real
LLM client against the scripted provider on a real socket, into the stored review (raw
body and error), GET /v1/screenings/{id} and the review page."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import select

from app.llm import LLMClient
from app.llm.redaction import REDACTED
from app.models import Review
from app.settings import ProviderSettings, Settings
from tests.support.in_process_api import TRANSLATOR_MODEL, Api, StartApi, provider
from tests.support.scripted_openai import HttpError, RawBody, ScriptedOpenAI

# Deliberately neither sk- nor Bearer shaped: only knowing the configured key redacts it.
CONFIGURED_KEY = "gw-0123456789abcdefXYZ"
BEARER_VALUE = "abc.DEF-ghi_123"
SK_TOKEN = "sk-proj-AbCdEf0123456789ghIJklMN"
URL_SECRET = "url-key-secret"
SECRETS = (CONFIGURED_KEY, BEARER_VALUE, SK_TOKEN, URL_SECRET)
# A gateway that echoes the request it refused, as some do.
ERROR_BODY = json.dumps(
    {
        "error": {
            "message": f"invalid key {CONFIGURED_KEY} for https://gw.example/v1?api-key={URL_SECRET}",
            "request_headers": {"authorization": f"Bearer {BEARER_VALUE}"},
            "hint": f"keys look like {SK_TOKEN}",
        }
    }
)
INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem add_zero' (n : ℕ) : n + 0 = n := by sorry"


@pytest.fixture
def keyed_settings(configured_settings: Settings, scripted_openai: ScriptedOpenAI) -> Settings:
    translator = provider(scripted_openai.base_url, TRANSLATOR_MODEL, CONFIGURED_KEY)
    return configured_settings.model_copy(update={"translator": translator})


@pytest.fixture
async def keyed_api(start_api: StartApi, keyed_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(keyed_settings) as api:
        yield api


async def screened(api: Api, within: float = 120.0) -> dict[str, Any]:
    posted = await api.client.post("/v1/screenings", json={"informal": INFORMAL, "formal": FORMAL})
    assert posted.status_code == 202, posted.text
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        body: dict[str, Any] = (
            await api.client.get(f"/v1/screenings/{posted.json()['id']}")
        ).json()
        if body["status"] == "done":
            return body
        await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
    raise AssertionError(f"not done in {within} s")


async def stored_translator_review(api: Api, screening_id: str) -> Review:
    async with api.runtime.sessions() as session:
        statement = select(Review).where(
            Review.screening_id == screening_id, Review.role == "translator"
        )
        return (await session.execute(statement)).scalar_one()


async def test_an_error_body_is_stored_and_shown_with_its_credentials_redacted(
    keyed_api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    scripted_openai.script(model=TRANSLATOR_MODEL, steps=[HttpError(400, body=ERROR_BODY)])
    screening = await screened(keyed_api)
    # The client did send the key: it is the provider's answer that must not keep it.
    sent = [r for r in scripted_openai.requests if r.model == TRANSLATOR_MODEL]
    assert sent[0].headers["authorization"] == f"Bearer {CONFIGURED_KEY}"

    review = await stored_translator_review(keyed_api, screening["id"])
    assert (review.parse_status, review.http_status) == ("provider_error", 400)
    assert review.raw_body is not None and review.error is not None
    for secret in SECRETS:
        assert secret not in review.raw_body and secret not in review.error
    assert f"invalid key {REDACTED} for https://gw.example/v1?api-key=***" in review.raw_body
    assert f"Bearer {REDACTED}" in review.raw_body and f"like {REDACTED}" in review.raw_body
    assert review.error.startswith("HTTP 400: ") and REDACTED in review.error

    shown = await keyed_api.client.get(f"/v1/screenings/{screening['id']}")
    (translator,) = [r for r in shown.json()["reviews"] if r["role"] == "translator"]
    assert translator["error"] == review.error
    page = await keyed_api.client.get(f"/review/items/{await queue_item(keyed_api, screening)}")
    assert page.status_code == 200 and REDACTED in page.text
    for secret in SECRETS:
        assert secret not in shown.text and secret not in page.text


async def queue_item(api: Api, screening: dict[str, Any]) -> int:
    assert screening["outcome"] == "needs_review"  # a provider error goes to a person
    listing = (await api.client.get("/v1/queue")).json()["items"]
    (item,) = [i for i in listing if i["screening_id"] == screening["id"]]
    return int(item["id"])


async def test_a_key_across_the_excerpt_cut_is_not_shown_in_half(
    scripted_openai: ScriptedOpenAI,
) -> None:
    # The error keeps 300 characters of the body: the key starts just before the cut.
    body = "x" * 290 + CONFIGURED_KEY + " and more " + "y" * 400
    scripted_openai.script(steps=[HttpError(500, body=body)])
    settings = ProviderSettings(
        base_url=scripted_openai.base_url,
        model="m",
        api_key=SecretStr(CONFIGURED_KEY),
        max_retries=0,
    )
    async with LLMClient(settings, concurrency=1) as client:
        result = await client.complete([{"role": "user", "content": "hello"}])
    assert result.error is not None and result.raw_body is not None
    assert CONFIGURED_KEY[:8] not in result.error and CONFIGURED_KEY not in result.raw_body
    assert result.raw_body == "x" * 290 + REDACTED + " and more " + "y" * 400


async def test_a_malformed_body_is_redacted_too(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.script(steps=[RawBody(f"<html>proxy error for Bearer {BEARER_VALUE}</html>")])
    settings = ProviderSettings(base_url=scripted_openai.base_url, model="m")
    async with LLMClient(settings, concurrency=1) as client:
        result = await client.complete([{"role": "user", "content": "hello"}])
    assert result.error is not None and result.error.startswith("malformed body")
    assert BEARER_VALUE not in result.error and BEARER_VALUE not in (result.raw_body or "")
    assert result.raw_body == f"<html>proxy error for Bearer {REDACTED}</html>"
