"""Every /v1 endpoint, taken from the app's own route table, against every kind of caller:
no key, a malformed key, an unknown key, a revoked key (401), each role below the one it
needs (403), and each role at or above it (neither 401 nor 403).

The expected roles are listed here: an endpoint added without an entry fails the test, and
one added without a key check fails the 401 cases."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from app.auth.keys import generate_key
from app.models.api_key import AccessRole
from app.settings import Settings
from app.web.session import SESSION_COOKIE
from tests.integration.test_review_sessions import csrf_of
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.review_queue import bearer, make_key, revoke

SUBMITTER, REVIEWER, ADMIN = AccessRole.SUBMITTER, AccessRole.REVIEWER, AccessRole.ADMIN
METRICS = AccessRole.METRICS
NEEDED: dict[tuple[str, str], AccessRole] = {
    ("POST", "/v1/screenings"): SUBMITTER,
    ("GET", "/v1/screenings"): SUBMITTER,
    ("GET", "/v1/screenings/{screening_id}"): SUBMITTER,
    ("GET", "/v1/screenings/{screening_id}/reviews/{review_id}/raw"): SUBMITTER,
    ("POST", "/v1/batches"): SUBMITTER,
    ("GET", "/v1/batches"): SUBMITTER,
    ("GET", "/v1/batches/{batch_id}"): SUBMITTER,
    ("GET", "/v1/batches/{batch_id}/results"): SUBMITTER,
    ("GET", "/v1/queue"): REVIEWER,
    ("GET", "/v1/queue/{item_id}"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/claim"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/release"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/decision"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/reopen"): ADMIN,
    ("POST", "/v1/queue/{item_id}/undo"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/adjudicate"): ADMIN,
    ("GET", "/v1/queue/{item_id}/comments"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/comments"): REVIEWER,
    ("POST", "/v1/queue/{item_id}/assign"): REVIEWER,
    ("GET", "/v1/queue/{item_id}/assignments"): REVIEWER,
    ("GET", "/v1/decisions/export"): REVIEWER,
    ("GET", "/v1/decisions/conflicts"): REVIEWER,
    ("GET", "/v1/reports/summary"): REVIEWER,
    ("GET", "/v1/review/stats"): REVIEWER,
    ("GET", "/v1/batches/{batch_id}/calibration"): REVIEWER,
    ("GET", "/v1/calibrations/compare"): REVIEWER,
    ("POST", "/v1/rescore"): ADMIN,
    ("GET", "/v1/keys"): ADMIN,
    ("POST", "/v1/keys"): ADMIN,
    ("DELETE", "/v1/keys/{name}"): ADMIN,
    ("GET", "/metrics"): METRICS,
}
# Paths that need a key: the API, and the Prometheus scrape (its counts say what is screened).
PROTECTED = ("/v1", "/metrics")
# Stand-ins for path parameters: well-formed, naming nothing stored.
PATH_VALUES = {
    "screening_id": "00000000-0000-4000-8000-000000000000",
    "batch_id": "00000000-0000-4000-8000-000000000000",
    "item_id": "1",
    "review_id": "1",
    "name": "nobody",
}


@pytest.fixture
async def auth_api(start_api: StartApi, unconfigured_settings: Settings) -> AsyncIterator[Api]:
    settings = unconfigured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as api:
        yield api


def route_table(api: Api) -> list[Any]:
    """Every route the app serves, those of included routers too."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI versions that flatten included routers into app.routes
        return list(api.app.routes)
    return list(iter_route_contexts(api.app.routes))


def v1_endpoints(api: Api) -> set[tuple[str, str]]:
    return {
        (method, route.path)
        for route in route_table(api)
        if (route.path or "").startswith(PROTECTED)
        for method in route.methods or ()
    }


def concrete(path: str) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES[m.group(1)], path)


async def test_every_v1_endpoint_has_an_expected_role(auth_api: Api) -> None:
    assert v1_endpoints(auth_api) == set(NEEDED)


async def test_the_expected_roles_are_enforced_for_every_caller(auth_api: Api) -> None:
    keys = {role: await make_key(auth_api, role, f"key-{role.value}") for role in AccessRole}
    await make_key(auth_api, ADMIN, "gone")
    gone = await _revoked_key(auth_api)
    for method, path in sorted(v1_endpoints(auth_api)):
        url, needed = concrete(path), NEEDED[(method, path)]
        for label, headers in _invalid_credentials(gone).items():
            response = await auth_api.client.request(method, url, headers=headers)
            _assert_unauthorized(response, f"{method} {path} with {label}")
        for role, key in keys.items():
            response = await auth_api.client.request(method, url, headers=bearer(key))
            what = f"{method} {path} as {role.value} (needs {needed.value})"
            if role.allows(needed):
                assert response.status_code not in (401, 403), f"{what}: {response.text}"
            else:
                assert response.status_code == 403, f"{what}: {response.text}"
                assert assert_error_shape(response.json())["code"] == "forbidden"


async def _revoked_key(api: Api) -> str:
    key = await make_key(api, ADMIN, "revoked-admin")
    response = await api.client.get("/v1/keys", headers=bearer(key))
    assert response.status_code == 200, response.text  # it worked before it was revoked
    await revoke(api, "revoked-admin")
    return key


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ({}, "this endpoint needs an API key: send 'Authorization: Bearer <key>'"),
        ({"Authorization": "KEY"}, "the Authorization header must read 'Bearer <key>'"),
        ({"Authorization": "Basic KEY"}, "the Authorization header must read 'Bearer <key>'"),
    ],
)
async def test_a_401_without_a_bearer_key_says_which_mistake_it_was(
    auth_api: Api, headers: dict[str, str], message: str
) -> None:
    response = await auth_api.client.get("/v1/screenings", headers=headers)
    _assert_unauthorized(response, str(headers))
    error = response.json()["error"]
    assert error["message"].startswith(message) and "KEY" not in error["message"]


def _invalid_credentials(revoked: str) -> dict[str, dict[str, str]]:
    return {
        "no key": {},
        "an unknown key": bearer(generate_key()),
        "a revoked key": bearer(revoked),
        "a malformed key": bearer("not-a-key"),
        "another scheme": {"Authorization": f"Basic {revoked}"},
        "an empty bearer": {"Authorization": "Bearer "},
    }


def _assert_unauthorized(response: httpx2.Response, what: str) -> None:
    assert response.status_code == 401, f"{what}: {response.text}"
    assert response.headers["www-authenticate"].startswith("Bearer"), what
    assert assert_error_shape(response.json())["code"] == "unauthorized", what


async def test_health_and_readiness_stay_open(auth_api: Api) -> None:
    assert (await auth_api.client.get("/healthz")).status_code == 200
    # Answered without a key (ready: a missing provider is reported, not a 503).
    assert (await auth_api.client.get("/readyz")).status_code == 200


async def test_auth_off_makes_every_caller_an_admin(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    assert unconfigured_settings.auth == "off"
    async with start_api(unconfigured_settings, with_worker=False) as api:
        for method, path in sorted(v1_endpoints(api)):
            response = await api.client.request(method, concrete(path))
            assert response.status_code not in (401, 403), f"{method} {path}: {response.text}"


async def test_the_openapi_document_declares_the_bearer_scheme(auth_api: Api) -> None:
    document = (await auth_api.client.get("/openapi.json")).json()
    schemes = document["components"]["securitySchemes"]
    assert [s["scheme"] for s in schemes.values()] == ["bearer"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert bool(operation.get("security")) == path.startswith(PROTECTED), (method, path)


async def test_a_metrics_key_reads_metrics_and_nothing_else(auth_api: Api) -> None:
    """Spelled out rather than through AccessRole.allows, which the matrix above uses."""
    key = await make_key(auth_api, METRICS, "prometheus")
    scrape = await auth_api.client.get("/metrics", headers=bearer(key))
    assert scrape.status_code == 200, scrape.text
    for method, path in sorted(v1_endpoints(auth_api) - {("GET", "/metrics")}):
        response = await auth_api.client.request(method, concrete(path), headers=bearer(key))
        assert response.status_code == 403, f"{method} {path}: {response.text}"
    for role in (SUBMITTER, REVIEWER):
        lower = await make_key(auth_api, role, f"not-a-scraper-{role.value}")
        assert (await auth_api.client.get("/metrics", headers=bearer(lower))).status_code == 403
    admin = await make_key(auth_api, ADMIN, "admin-scrapes")
    assert (await auth_api.client.get("/metrics", headers=bearer(admin))).status_code == 200


async def test_a_metrics_key_cannot_sign_in_to_the_review_page(auth_api: Api) -> None:
    key = await make_key(auth_api, METRICS, "prometheus")
    page = await auth_api.client.get("/review/sign-in")
    form = {"key": key, "csrf_token": csrf_of(page), "next": "/review"}
    response = await auth_api.client.post("/review/sign-in", data=form)
    assert response.status_code == 403, response.text
    assert "Only a reviewer or admin key" in response.text
    assert SESSION_COOKIE not in response.headers.get("set-cookie", "")


async def test_the_openapi_document_lists_the_auth_and_body_statuses(auth_api: Api) -> None:
    document = (await auth_api.client.get("/openapi.json")).json()
    for path, operations in document["paths"].items():
        if not path.startswith(PROTECTED):
            continue
        for method, operation in operations.items():
            listed = set(operation["responses"])
            assert {"401", "403", "503"} <= listed, f"{method} {path}: {sorted(listed)}"
            if "requestBody" in operation:
                assert {"400", "413", "422"} <= listed, f"{method} {path}: {sorted(listed)}"
