"""JSON request bodies that a route reads only once the caller is authorised.

FastAPI reads and parses a body parameter before any dependency runs, so a request with
no key would cost its whole body before its 401. A `JsonBody` is a dependency instead:
declared after the access checks (router dependencies always come first), it reads the
body -- held to its cap while it is read (app/api/body_cap.py) -- parses it with the one
depth-limited parser every JSON body goes through, and validates it as FastAPI would (the
same 422 and 400 bodies). `openapi_extra` and `document_bodies` keep the request schema in
the OpenAPI document, where FastAPI would have put it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.models import Schema
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import JsonSchemaMode, models_json_schema
from starlette.requests import Request

from app.intake.json_text import parse_json

Model = TypeVar("Model", bound=BaseModel)
COMPONENT = "#/components/schemas/{model}"


class JsonBody(Generic[Model]):
    """A dependency giving the request body as `model`; with `optional`, an empty body
    (or JSON null) is None."""

    def __init__(self, model: type[Model], *, optional: bool = False) -> None:
        self.model = model
        self.optional = optional

    async def __call__(self, request: Request) -> Model | None:
        data = await request.body()
        value = _json_value(request, data) if data else None
        if value is None and self.optional:
            return None
        if not data:
            raise RequestValidationError(
                [{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}]
            )
        try:
            return self.model.model_validate(value)
        except ValidationError as error:
            raise RequestValidationError(
                [{**e, "loc": ("body", *e["loc"])} for e in error.errors(include_url=False)]
            ) from error

    def openapi_extra(self) -> dict[str, Any]:
        """The route's `openapi_extra`: the request body FastAPI would have documented."""
        schema: dict[str, Any] = {"$ref": COMPONENT.format(model=self.model.__name__)}
        if self.optional:
            schema = {"anyOf": [schema, {"type": "null"}], "title": "Body"}
        body: dict[str, Any] = {"content": {"application/json": {"schema": schema}}}
        if not self.optional:
            body["required"] = True
        return {"requestBody": body}


def _json_value(request: Request, data: bytes) -> Any:
    """Parsed when the body says it is JSON; otherwise the bytes, which no model accepts
    (a 422 naming the body, as FastAPI answers a body of another media type)."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    kind, _, subtype = media_type.partition("/")
    if kind == "application" and (subtype == "json" or subtype.endswith("+json")):
        return parse_json(data)
    return data


def document_bodies(app: FastAPI, bodies: Sequence[JsonBody[Any]]) -> None:
    """Add the schemas of `bodies` (and the models they use) to the OpenAPI components,
    which FastAPI fills only from the parameters it reads itself."""
    generate: Callable[[], dict[str, Any]] = app.openapi
    mode: JsonSchemaMode = "validation"
    _, found = models_json_schema([(body.model, mode) for body in bodies], ref_template=COMPONENT)
    # Encoded as FastAPI encodes its own components (no null defaults, numbers as floats).
    definitions = {
        name: jsonable_encoder(Schema(**schema), by_alias=True, exclude_none=True)
        for name, schema in found.get("$defs", {}).items()
    }

    def openapi() -> dict[str, Any]:
        document = generate()
        components = document.setdefault("components", {})
        schemas = definitions | components.get("schemas", {})
        components["schemas"] = dict(sorted(schemas.items()))
        return document

    app.openapi = openapi  # type: ignore[method-assign]
