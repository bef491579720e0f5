"""In-process API fixtures: the FastAPI app with its real lifespan (database, LLM clients,
embedded worker) on `database_url`, reached through httpx2's ASGI transport, and a scripted
OpenAI-compatible provider on loopback.

    api            configured providers (the scripted server), embedded worker running
    idle_api       configured providers, no worker: submitted screenings stay queued
    bare_api       no provider configured, no worker
    start_api      the factory behind them: `async with start_api(settings, ...) as api`
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from app.application import create_app
from app.settings import ProviderSettings, Settings
from tests.support.in_process_api import (
    JUDGE_MODEL,
    TRANSLATOR_KEY,
    TRANSLATOR_MODEL,
    Api,
    StartApi,
    provider,
)
from tests.support.scripted_openai import ScriptedOpenAI


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def configured_settings(
    clean_env: None, database_url: str, scripted_openai: ScriptedOpenAI
) -> Settings:
    return Settings(
        database_url=database_url,
        translator=provider(scripted_openai.base_url, TRANSLATOR_MODEL, TRANSLATOR_KEY),
        judge=provider(scripted_openai.base_url, JUDGE_MODEL),
        # Keys and roles have tests of their own (test_auth*.py); here every call is admin.
        auth="off",
    )


@pytest.fixture
def unconfigured_settings(clean_env: None, database_url: str) -> Settings:
    return Settings(
        database_url=database_url,
        translator=ProviderSettings(),
        judge=ProviderSettings(),
        auth="off",  # as in configured_settings
    )


@pytest.fixture
def start_api() -> StartApi:
    @asynccontextmanager
    async def start(settings: Settings, *, with_worker: bool = True) -> AsyncIterator[Api]:
        app = create_app(settings, with_worker=with_worker)
        async with app.router.lifespan_context(app):
            transport = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
                yield Api(app, client, app.state.runtime)

    return start


@pytest.fixture
async def api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(configured_settings) as started:
        yield started


@pytest.fixture
async def idle_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(configured_settings, with_worker=False) as started:
        yield started


@pytest.fixture
async def bare_api(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Api]:
    async with start_api(unconfigured_settings, with_worker=False) as started:
        yield started
