"""/healthz, /readyz and the OpenAPI document."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from alembic import command
from alembic.script import ScriptDirectory

from app.db.migrate import alembic_config, head_revision, migrations_dir
from app.settings import ProviderSettings, Settings
from tests.support.in_process_api import Api, StartApi


async def test_healthz_says_the_process_is_alive(bare_api: Api) -> None:
    response = await bare_api.client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


READY = {"status": "ready", "problems": []}
CONFIGURED = {"translator": "configured", "judge": "configured"}


async def test_readyz_is_ready_with_a_database_at_head(idle_api: Api) -> None:
    response = await idle_api.client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == READY | {"providers": CONFIGURED, "worker": "none"}


async def test_readyz_says_the_worker_runs(api: Api) -> None:
    response = await api.client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == READY | {"providers": CONFIGURED, "worker": "running"}


async def test_readyz_without_providers_is_ready_and_says_they_are_missing(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    # An API replica, or a service of supplied replies, is ready without any provider;
    # asked for a worker, it runs none (it could do no job).
    async with start_api(unconfigured_settings, with_worker=True) as api:
        response = await api.client.get("/readyz")
    assert response.status_code == 200, response.text
    missing = {"translator": "missing", "judge": "missing"}
    assert response.json() == READY | {"providers": missing, "worker": "none"}


async def test_readyz_with_one_role_missing_runs_no_worker(
    start_api: StartApi, configured_settings: Settings
) -> None:
    settings = configured_settings.model_copy(update={"judge": ProviderSettings()})
    async with start_api(settings, with_worker=True) as api:
        response = await api.client.get("/readyz")
        assert api.runtime.worker is None
    providers = {"translator": "configured", "judge": "missing"}
    assert response.json() == READY | {"providers": providers, "worker": "none"}


@pytest.fixture
def behind_head_url(empty_database_url: str) -> str:
    """A database migrated to the revision before head."""
    url = empty_database_url
    scripts = ScriptDirectory(str(migrations_dir()))
    before_head = scripts.get_revision(head_revision()).down_revision
    assert isinstance(before_head, str)
    command.upgrade(alembic_config(url), before_head)
    return url


async def test_readyz_is_not_ready_while_the_schema_is_behind_head(
    start_api: StartApi, clean_env: None, behind_head_url: str
) -> None:
    settings = Settings(database_url=behind_head_url, auth="off")
    async with start_api(settings, with_worker=False) as api:
        response = await api.client.get("/readyz")
    assert response.status_code == 503, response.text
    [problem] = response.json()["problems"]
    assert f"not at head {head_revision()}" in problem and "faithscreen db upgrade" in problem


@pytest.mark.parametrize(
    "database_url",
    ["sqlite:////nonexistent-faithscreen-dir/x.db", "postgresql://postgres@127.0.0.1:1/x"],
)
async def test_readyz_names_an_unreachable_database(
    start_api: StartApi, configured_settings: Settings, database_url: str
) -> None:
    assert configured_settings.database_url == database_url
    threads_before = aiosqlite_threads()
    async with start_api(configured_settings, with_worker=False) as api:
        response = await api.client.get("/readyz")
    assert response.status_code == 503
    [problem] = response.json()["problems"]
    assert problem.startswith("database unreachable")
    await stopped(aiosqlite_threads() - threads_before)


def aiosqlite_threads() -> set[threading.Thread]:
    # A thread started without a name is named after its target (Python 3.10 and later).
    return {t for t in threading.enumerate() if "(_connection_worker_thread)" in t.name}


async def stopped(threads: set[threading.Thread]) -> None:
    """Wait, with the event loop running, until `threads` have ended. aiosqlite stops a
    failed connection's worker thread by a message it answers on the loop; were the test's
    loop closed first, the thread would raise `RuntimeError('Event loop is closed')`
    (seen on loaded runs as PytestUnhandledThreadExceptionWarning; in a bare loop of 200
    failed connects, 47 times)."""
    deadline = time.monotonic() + 120
    while any(thread.is_alive() for thread in threads):
        assert time.monotonic() < deadline, [t.name for t in threads if t.is_alive()]
        await asyncio.sleep(0.01)


# --- OpenAPI -------------------------------------------------------------------------------


async def openapi(api: Api) -> dict[str, Any]:
    response = await api.client.get("/openapi.json")
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def schema(document: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = document["components"]["schemas"][name]
    return found


async def test_openapi_describes_every_endpoint(bare_api: Api) -> None:
    paths = (await openapi(bare_api))["paths"]
    expected = {
        "/v1/screenings": {"post", "get"},
        "/v1/screenings/{screening_id}": {"get"},
        "/healthz": {"get"},
        "/readyz": {"get"},
    }
    for path, methods in expected.items():
        assert methods <= set(paths[path]), path


async def test_openapi_describes_the_request_and_response_schemas(bare_api: Api) -> None:
    document = await openapi(bare_api)
    post = document["paths"]["/v1/screenings"]["post"]
    request_ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert request_ref.endswith("/ScreeningRequest")
    assert "202" in post["responses"]
    request = schema(document, "ScreeningRequest")
    assert {"informal", "formal", "header", "external_id", "options", "replies"} <= set(
        request["properties"]
    )
    assert set(request["required"]) == {"informal", "formal"}
    get = document["paths"]["/v1/screenings/{screening_id}"]["get"]
    response_ref = get["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert response_ref.endswith("/ScreeningOut")
    out = schema(document, "ScreeningOut")["properties"]
    assert {"id", "status", "outcome", "reasons", "evidence", "informal", "formal"} <= set(out)
    assert {"external_id", "policy_version", "reviews"} <= set(out)
    assert out["reviews"]["items"]["$ref"].endswith("/ReviewOut")
    review = schema(document, "ReviewOut")["properties"]
    assert {"role", "attempt", "purpose", "raw_response", "verdict", "parse_status"} <= set(review)
    assert {"back_translation", "issues", "finish_reason", "model", "usage"} <= set(review)
    assert {"latency_ms", "parser_version", "prompt_version", "created_at"} <= set(review)


async def test_openapi_documents_the_one_error_shape(bare_api: Api) -> None:
    document = await openapi(bare_api)
    paths = document["paths"]
    documented = {
        ("/v1/screenings", "post"): {"400", "409", "413", "422"},
        ("/v1/screenings", "get"): {"422"},
        ("/v1/screenings/{screening_id}", "get"): {"404"},
    }
    for (path, method), statuses in documented.items():
        responses = paths[path][method]["responses"]
        for status in statuses:
            ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
            # Not FastAPI's default 422 body ({"detail": [...]}): the API never sends that.
            assert ref.endswith("/ErrorBody"), (path, method, status)
    assert set(schema(document, "ErrorInfo")["properties"]) >= {"code", "message", "details"}
    readyz = paths["/readyz"]["get"]["responses"]
    assert readyz["503"]["content"]["application/json"]["schema"]["$ref"].endswith("/Readiness")
