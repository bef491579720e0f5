"""app/api/openapi.py: every operation's error statuses read from what its route does, the
one error schema, the bearer scheme; a route added later gets them with nothing named."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Depends, FastAPI, Query

from app.api.auth import admin_access
from app.api.deps import SessionDep
from app.api.request_body import JsonBody
from app.api.schemas import Accepted, ErrorBody
from app.application import create_app
from app.intake.requests import ScreeningRequest
from app.settings import Settings
from tests.support.in_process_api import Api

ERROR_REF = "#/components/schemas/ErrorBody"
LATER_BODY = JsonBody(ScreeningRequest)


def statuses(document: dict[str, Any], method: str, path: str) -> set[str]:
    return set(document["paths"][path][method]["responses"])


def app_with_new_routes(settings: Settings) -> FastAPI:
    """The real app plus routes no module of the project names."""
    app = create_app(settings, with_worker=False)
    router = APIRouter(prefix="/v1/later", dependencies=[admin_access])

    @router.post("/{thing_id}", openapi_extra=LATER_BODY.openapi_extra())
    async def later(
        thing_id: str,
        request: Annotated[ScreeningRequest, Depends(LATER_BODY)],
        session: SessionDep,
    ) -> Accepted:
        raise NotImplementedError

    @router.get("")
    async def later_list(limit: Annotated[int, Query(ge=1)] = 1) -> list[str]:
        return []

    app.include_router(router)
    app.openapi_schema = None
    return app


def test_a_route_added_later_documents_what_it_can_answer(unconfigured_settings: Settings) -> None:
    document = app_with_new_routes(unconfigured_settings).openapi()
    assert statuses(document, "post", "/v1/later/{thing_id}") == {
        "200",
        "400",
        "401",
        "403",
        "404",
        "413",
        "422",
        "503",
    }
    # No body, no path parameter: no 400, 404 or 413; the key check still answers 401/403/503.
    assert statuses(document, "get", "/v1/later") == {"200", "401", "403", "422", "503"}
    operation = document["paths"]["/v1/later/{thing_id}"]["post"]
    assert operation["security"] == [{"HTTPBearer": []}]
    for status, response in operation["responses"].items():
        if status != "200":
            assert response["content"] == {"application/json": {"schema": {"$ref": ERROR_REF}}}
            assert response["description"], status


async def test_every_error_is_json_with_the_error_schema(idle_api: Api) -> None:
    document = (await idle_api.client.get("/openapi.json")).json()
    assert "HTTPValidationError" not in document["components"]["schemas"]
    scheme = document["components"]["securitySchemes"]["HTTPBearer"]
    assert scheme == {"type": "http", "scheme": "bearer", **scheme}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                if int(status) >= 400 and path != "/readyz":
                    content = response["content"]
                    assert content == {"application/json": {"schema": {"$ref": ERROR_REF}}}, (
                        method,
                        path,
                        status,
                    )
    # /metrics answers text/plain, its errors JSON.
    assert "text/plain" in document["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert document["paths"]["/metrics"]["get"]["security"] == [{"HTTPBearer": []}]


async def test_the_results_stream_is_declared_ndjson_with_its_row(idle_api: Api) -> None:
    document = (await idle_api.client.get("/openapi.json")).json()
    ok = document["paths"]["/v1/batches/{batch_id}/results"]["get"]["responses"]["200"]
    assert list(ok["content"]) == ["application/x-ndjson", "text/csv"]  # CSV: ?format=csv
    row = ok["content"]["application/x-ndjson"]["schema"]
    assert {"index", "id", "status", "outcome", "reasons"} <= set(row["properties"])


@pytest.mark.parametrize(
    ("path", "formats", "json_type"),
    [
        ("/v1/batches/{batch_id}/results", ["jsonl", "csv"], "application/x-ndjson"),
        ("/v1/decisions/export", ["jsonl", "csv"], "application/x-ndjson"),
        ("/v1/batches/{batch_id}/calibration", ["json", "csv"], "application/json"),
    ],
)
async def test_each_row_endpoint_declares_its_formats(
    idle_api: Api, path: str, formats: list[str], json_type: str
) -> None:
    document = (await idle_api.client.get("/openapi.json")).json()
    operation = document["paths"][path]["get"]
    (parameter,) = [p for p in operation["parameters"] if p["name"] == "format"]
    assert parameter["schema"]["enum"] == formats and parameter["schema"]["default"] == formats[0]
    assert list(operation["responses"]["200"]["content"]) == [json_type, "text/csv"]


async def test_a_405_lists_every_method_of_the_path(idle_api: Api) -> None:
    for path, expected in [("/v1/batches", "GET, POST"), ("/v1/keys", "GET, POST")]:
        response = await idle_api.client.request("OPTIONS", path)
        assert response.status_code == 405, response.text
        assert response.headers["allow"] == expected, path


async def test_batch_rejections_match_the_error_schema(idle_api: Api) -> None:
    """A batch's details name items (index, line, code) or the whole body (field null)."""
    bad_body = await idle_api.client.post("/v1/batches", json={"": None, "items": []})
    bad_line = await idle_api.client.post(
        "/v1/batches",
        content=b'{"informal": "i", "formal": "f"}\n{"informal": ""}\n',
        headers={"Content-Type": "application/x-ndjson"},
    )
    for response in (bad_body, bad_line):
        assert response.status_code == 422, response.text
        details = ErrorBody.model_validate(response.json()).error.details
        assert details, response.text
    assert bad_body.json()["error"]["details"][0]["field"] is None
    assert {(d["index"], d["line"]) for d in bad_line.json()["error"]["details"]} == {(1, 2)}


async def test_health_checks_declare_the_auth_off_loopback_refusal(idle_api: Api) -> None:
    """With FAITHSCREEN_AUTH=off, serve's guard answers 403 on every path, these too."""
    document = (await idle_api.client.get("/openapi.json")).json()
    for path in ("/healthz", "/readyz"):
        refused = document["paths"][path]["get"]["responses"]["403"]
        assert "host_not_loopback" in refused["description"], path
        assert refused["content"] == {"application/json": {"schema": {"$ref": ERROR_REF}}}
