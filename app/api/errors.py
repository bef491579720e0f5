"""One JSON shape for every error: {"error": {"code", "message", "details"?}}."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request, routing
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import OperationalError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.routing import Match

from app.errors import AppError
from app.intake.requests import plain_message

log = logging.getLogger("faithscreen.api")


class ErrorResponse(JSONResponse):
    """An error body in ASCII JSON: an error may echo client text (a field name, an id),
    and text with a lone surrogate cannot be encoded as UTF-8, so Starlette's default
    rendering would fail while reporting the client's mistake."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if details:
        body["details"] = details
    body |= extra or {}
    return ErrorResponse({"error": body}, status_code=status_code, headers=headers)


def _field_path(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def _validation_details(error: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {
            "field": _field_path(tuple(e.get("loc", ()))),
            "message": _message(e),
            "type": e.get("type"),
        }
        for e in error.errors()
    ]


def _message(error: Mapping[str, Any]) -> str:
    if error.get("type") == "model_type" and tuple(error.get("loc", ())) == ("body",):
        return "send one JSON object (with the header Content-Type: application/json)"
    return plain_message(error)


async def _on_validation(_: Request, error: RequestValidationError) -> JSONResponse:
    details = _validation_details(error)
    if any(d["type"] == "json_invalid" for d in details):
        return error_response(400, "malformed_json", "the request body is not valid JSON", details)
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details)
    return error_response(422, "validation_error", summary, details)


def app_error_response(error: AppError) -> JSONResponse:
    """The one rendering of an AppError: its details, its extra fields, its headers."""
    return error_response(
        error.status_code,
        error.code,
        error.message,
        error.details,
        headers=error.headers or None,
        extra=error.extra,
    )


async def _on_app_error(_: Request, error: AppError) -> JSONResponse:
    return app_error_response(error)


async def _on_client_gone(_: Request, error: ClientDisconnect) -> JSONResponse:
    # The client closed the connection (or was cut off at FAITHSCREEN_CLIENT_TIMEOUT_SECONDS)
    # while its body was read: nothing was stored, and nobody is left to read this answer.
    log.info("client disconnected before its request body arrived")
    return error_response(400, "client_disconnected", "the request body did not arrive")


async def _on_http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
    codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}
    code = codes.get(error.status_code, "http_error")
    # Kept: a 405 must say which methods are allowed (the Allow header).
    headers = dict(error.headers or {})
    if error.status_code == 405:
        headers["Allow"] = ", ".join(_allowed_methods(request))
    message = str(error.detail)
    if error.status_code == 404 and message == "Not Found":  # no route: a typo, or `/`
        message = (
            f"no endpoint {request.method} {request.url.path}: the API's endpoints are "
            "listed at /docs, the review pages start at /review"
        )
    return error_response(error.status_code, code, message, headers=headers)


def _allowed_methods(request: Request) -> list[str]:
    """Every method of every route at this path: Starlette's 405 names only the first
    route's (GET and POST /v1/batches are two routes)."""
    allowed: set[str] = set()
    for context in routing.iter_route_contexts(request.app.routes):
        match, _ = context.matches(request.scope)
        if match is not Match.NONE:
            allowed |= set(getattr(context, "methods", None) or ())
    return sorted(allowed)


async def _on_database_down(_: Request, error: OperationalError) -> JSONResponse:
    log.warning("database unavailable: %s", error)
    return error_response(
        503, "database_unavailable", "the database is not answering; retry shortly"
    )


async def _on_unexpected(_: Request, error: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=error)
    return error_response(500, "internal_error", "an unexpected error occurred; it was logged")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _on_validation)  # type: ignore[arg-type]
    app.add_exception_handler(AppError, _on_app_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _on_http_error)  # type: ignore[arg-type]
    app.add_exception_handler(OperationalError, _on_database_down)  # type: ignore[arg-type]
    app.add_exception_handler(ClientDisconnect, _on_client_gone)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _on_unexpected)
