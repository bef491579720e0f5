"""The OpenAPI document told whole: what each operation can answer, read from the route.

FastAPI documents the success response and whatever a route lists by hand. This module
post-processes the generated document so every operation also lists the error statuses
its dependencies and parameters can produce, each with the one error schema (`ErrorBody`):

    the key check (`authenticate`)  401 no valid key, 503 database down; the bearer scheme
    a role check (`require(role)`)  403
    a request body                  400 malformed JSON, 413 too large, 422 invalid
    any parameter or body           422 (a value that does not validate)
    a path parameter                404 (nothing has that id)
    a database session              503

A status a route declares itself (409 where it raises one, the batch submit's 415) is
kept with its own description. A new route gets all of this for free: nothing here
names a route.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, routing
from fastapi.dependencies.models import Dependant

from app.api.auth import (
    authenticate,
    require_admin,
    require_metrics,
    require_reviewer,
    require_submitter,
)
from app.api.deps import get_session
from app.api.schemas import ErrorBody

SCHEME = "HTTPBearer"
ERROR_REF = {"$ref": f"#/components/schemas/{ErrorBody.__name__}"}
ROLE_CHECKS = frozenset({require_submitter, require_reviewer, require_admin, require_metrics})
# FastAPI's own validation-error shape, which this API never sends (see app/api/errors.py).
FASTAPI_VALIDATION = ("HTTPValidationError", "ValidationError")
ERROR_DESCRIPTIONS = {
    400: "Malformed JSON (or nested deeper than the parser allows), or a body that did not arrive.",
    401: "No valid API key: send `Authorization: Bearer <key>`.",
    403: "The key's role may not do this.",
    404: "Nothing has that id.",
    413: "The body, or a field in it, is larger than the server accepts.",
    422: "A parameter or the body does not validate; `details` names each field.",
    503: "The database is not answering; retry shortly.",
}


def calls(dependant: Dependant) -> Iterator[Callable[..., Any]]:
    """Every dependency callable under `dependant`, depth first."""
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from calls(sub)


def route_statuses(route: Any, operation: dict[str, Any]) -> set[int]:
    """The error statuses the route's dependencies, parameters and body can produce."""
    dependant: Dependant = route.dependant
    found = set(calls(dependant))
    statuses: set[int] = set()
    if authenticate in found:
        statuses |= {401, 503}
    if found & ROLE_CHECKS:
        statuses.add(403)
    if get_session in found:
        statuses.add(503)
    if "requestBody" in operation or dependant.body_params:
        statuses |= {400, 413, 422}
    if dependant.query_params or dependant.header_params or dependant.cookie_params:
        statuses.add(422)
    if dependant.path_params:
        statuses |= {404, 422}
    return statuses


def is_guarded(route: Any) -> bool:
    return authenticate in set(calls(route.dependant))


def complete_operation(operation: dict[str, Any], statuses: set[int], guarded: bool) -> None:
    responses: dict[str, Any] = operation.setdefault("responses", {})
    for needed in statuses:
        responses.setdefault(str(needed), {})
    for status, response in responses.items():
        if status.isdigit() and int(status) >= 400:
            _error_response(int(status), response)
    operation["responses"] = dict(sorted(responses.items()))
    if guarded:
        operation["security"] = [{SCHEME: []}]


def _error_response(status: int, response: dict[str, Any]) -> None:
    """JSON with the error schema, unless the route gave another JSON schema (/readyz's
    503 is a Readiness). An error is JSON whatever the route's success media type (the
    document would otherwise say /metrics answers its 401 as text/plain)."""
    schema = response.get("content", {}).get("application/json", {}).get("schema", {})
    if not schema or schema.get("$ref", "").rsplit("/", 1)[-1] in FASTAPI_VALIDATION:
        schema = ERROR_REF
    response["content"] = {"application/json": {"schema": schema}}
    # FastAPI's placeholders (the status phrase, "Validation Error") say nothing more.
    if response.get("description") in (None, "", HTTPStatus(status).phrase, "Validation Error"):
        response["description"] = ERROR_DESCRIPTIONS.get(status) or HTTPStatus(status).phrase


def complete_document(app: FastAPI, document: dict[str, Any]) -> dict[str, Any]:
    """`document` with every operation's statuses, error schema and security filled in."""
    for context in routing.iter_route_contexts(app.routes):
        if not isinstance(context.original_route, routing.APIRoute):
            continue
        if not context.include_in_schema:
            continue
        operations = document.get("paths", {}).get(context.path_format, {})
        for method in context.methods or ():
            operation = operations.get(method.lower())
            if operation is not None:
                statuses = route_statuses(context, operation)
                complete_operation(operation, statuses, is_guarded(context))
    _components(document)
    return document


def _components(document: dict[str, Any]) -> None:
    components = document.setdefault("components", {})
    schemes = components.setdefault("securitySchemes", {})
    schemes.setdefault(SCHEME, {"type": "http", "scheme": "bearer"})
    schemas = components.setdefault("schemas", {})
    schemas.setdefault(ErrorBody.__name__, ErrorBody.model_json_schema(ref_template=_ref()))
    for name, schema in ErrorBody.model_json_schema(ref_template=_ref()).get("$defs", {}).items():
        schemas.setdefault(name, schema)
    schemas[ErrorBody.__name__].pop("$defs", None)
    # Left unused once every 422 names the error schema.
    if f"/{FASTAPI_VALIDATION[0]}'" not in repr(document["paths"]):
        for name in FASTAPI_VALIDATION:
            schemas.pop(name, None)


def _ref() -> str:
    return "#/components/schemas/{model}"


def document_contract(app: FastAPI) -> None:
    """Make `app.openapi()` return the completed document (after any other wrapper)."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        return complete_document(app, generate())

    app.openapi = openapi  # type: ignore[method-assign]
