"""The client's response models (faithscreen_client, its own distribution, which cannot
import the server's schemas) against the server's OpenAPI document: for every call the
client makes, the model it parses the answer with has the same fields, at every depth, as
the document's schema for that answer: the same names, required-ness, types and enums.

Both sides are flattened to `path -> description` (`Screening.reviews[].verdict ->
required string`), so a failure names the field that differs."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from pydantic import BaseModel, create_model

from app.application import create_app
from app.settings import ProviderSettings, Settings
from faithscreen_client import calls
from faithscreen_client.calibration import Calibration
from faithscreen_client.calls import Call
from faithscreen_client.models import (
    Accepted,
    Batch,
    BatchAccepted,
    BatchPage,
    BatchResult,
    Screening,
    ScreeningPage,
)

Document = dict[str, Any]
Flat = dict[str, str]

# Each call the client makes, the status it reads a body of, and the model it reads it as.
CLIENT_READS: list[tuple[Call, str, str, type[BaseModel]]] = [
    (calls.submit_screening({}), "202", "application/json", Accepted),
    (calls.get_screening("{screening_id}"), "200", "application/json", Screening),
    (calls.list_screenings({}, None, 1), "200", "application/json", ScreeningPage),
    (calls.submit_batch([], None, None), "202", "application/json", BatchAccepted),
    # A repeat of an Idempotency-Key: the batch stored first.
    (calls.submit_batch([], None, None), "200", "application/json", BatchAccepted),
    (calls.get_batch("{batch_id}"), "200", "application/json", Batch),
    (calls.list_batches(None, 1), "200", "application/json", BatchPage),
    (calls.batch_results("{batch_id}"), "200", "application/x-ndjson", BatchResult),
    (calls.calibration("{batch_id}"), "200", "application/json", Calibration),
]


@pytest.fixture
def document(clean_env: None, tmp_path: Path) -> Document:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'unused.db'}",
        translator=ProviderSettings(),
        judge=ProviderSettings(),
        auth="off",
    )
    openapi: Document = create_app(settings, with_worker=False).openapi()
    return openapi


def answer_schema(document: Document, call: Call, status: str, media: str) -> Any:
    """The document's schema of `call`'s answer (its path template is the client's path)."""
    operation = document["paths"][unquote(call.path)][call.method.lower()]
    return operation["responses"][status]["content"][media]["schema"]


def flat(schema: Any, defs: Document, path: str, out: Flat, presence: str = "") -> Flat:
    """`schema` flattened into `out`: one entry per field, item and value, at any depth."""
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    variants = schema.get("anyOf", [schema])
    nullable = any(v.get("type") == "null" for v in variants)
    kept = sorted((v for v in variants if v.get("type") != "null"), key=repr)
    lead = " ".join(word for word in (presence, "nullable" if nullable else "") if word)
    for index, variant in enumerate(kept):
        where = path if len(kept) == 1 else f"{path}|{index}"
        flat_one(variant, defs, where, out, lead)
    return out


def flat_one(schema: Any, defs: Document, path: str, out: Flat, lead: str) -> None:
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type", "any")
    enum = schema.get("enum", [schema["const"]] if "const" in schema else None)
    words = [lead, kind, schema.get("format", ""), f"enum{sorted(enum)}" if enum else ""]
    out[path] = " ".join(word for word in words if word)
    required = set(schema.get("required", []))
    for name, field in schema.get("properties", {}).items():
        presence = "required" if name in required else "optional"
        flat(field, defs, f"{path}.{name}", out, presence)
    if "items" in schema:
        flat(schema["items"], defs, f"{path}[]", out)
    if isinstance(schema.get("additionalProperties"), dict):
        flat(schema["additionalProperties"], defs, f"{path}{{}}", out)


def server_side(document: Document, call: Call, status: str, media: str, name: str) -> Flat:
    schema = answer_schema(document, call, status, media)
    return flat(schema, document["components"]["schemas"], name, {})


def client_side(model: type[BaseModel], name: str) -> Flat:
    schema = model.model_json_schema(ref_template="#/$defs/{model}")
    return flat(schema, schema.get("$defs", {}), name, {})


@pytest.mark.parametrize(
    ("call", "status", "media", "model"),
    CLIENT_READS,
    ids=[f"{c.method} {unquote(c.path)} {s}" for c, s, _, _ in CLIENT_READS],
)
def test_what_the_client_parses_is_what_the_server_documents(
    document: Document, call: Call, status: str, media: str, model: type[BaseModel]
) -> None:
    name = model.__name__
    assert client_side(model, name) == server_side(document, call, status, media, name)


def test_the_error_body_has_what_the_client_reads(document: Document) -> None:
    """calls.error_of reads `error.code`, `error.message` and `error.details` (a list)."""
    body = flat({"$ref": "ErrorBody"}, document["components"]["schemas"], "body", {})
    assert body["body.error.code"] == "required string"
    assert body["body.error.message"] == "required string"
    assert body["body.error.details"] == "optional nullable array"


def test_a_field_dropped_renamed_or_retyped_on_either_side_is_a_difference(
    document: Document,
) -> None:
    """The comparison itself: each kind of drift, made on a copy, is seen."""
    screening = CLIENT_READS[1][:3]  # the whole screening: models nested in models
    assert client_side(Screening, "S") == server_side(document, *screening, "S")
    dropped = copy.deepcopy(document)
    del dropped["components"]["schemas"]["ReviewOut"]["properties"]["verdict"]
    assert client_side(Screening, "S") != server_side(dropped, *screening, "S")

    accepted = CLIENT_READS[0][:3]
    renamed = create_model(
        "Renamed", id=(str, ...), state=(Accepted.model_fields["status"].annotation, ...)
    )
    assert client_side(renamed, "A") != server_side(document, *accepted, "A")
    retyped = copy.deepcopy(document)
    retyped["components"]["schemas"]["ScreeningStatus"]["enum"].append("paused")
    assert client_side(Accepted, "A") != server_side(retyped, *accepted, "A")
    optional = create_model("Optional", __base__=Accepted, id=(str, "x"))
    assert client_side(optional, "A") != server_side(document, *accepted, "A")
