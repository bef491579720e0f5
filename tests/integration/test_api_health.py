"""/healthz, /readyz and the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest

from app.settings import Settings
from tests.integration.conftest import Api, StartApi

PROVIDER_VARIABLES = [
    "FAITHSCREEN_TRANSLATOR_BASE_URL",
    "FAITHSCREEN_TRANSLATOR_MODEL",
    "FAITHSCREEN_JUDGE_BASE_URL",
    "FAITHSCREEN_JUDGE_MODEL",
]


async def test_healthz_says_the_process_is_alive(bare_api: Api) -> None:
    response = await bare_api.client.get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


async def test_readyz_is_ready_with_a_database_and_both_providers(idle_api: Api) -> None:
    response = await idle_api.client.get("/readyz")
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "ready", "problems": []}


async def test_readyz_names_the_missing_provider_variables(bare_api: Api) -> None:
    response = await bare_api.client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "not_ready"
    [problem] = body["problems"]  # the database answers: only the providers are missing
    for variable in PROVIDER_VARIABLES:
        assert variable in problem


@pytest.mark.parametrize(
    "database_url",
    ["sqlite:////nonexistent-faithscreen-dir/x.db", "postgresql://postgres@127.0.0.1:1/x"],
)
async def test_readyz_names_an_unreachable_database(
    start_api: StartApi, configured_settings: Settings, database_url: str
) -> None:
    assert configured_settings.database_url == database_url
    async with start_api(configured_settings, with_worker=False) as api:
        response = await api.client.get("/readyz")
    assert response.status_code == 503
    [problem] = response.json()["problems"]
    assert problem.startswith("database unreachable")


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
