"""Schemathesis hooks for tests/e2e/test_openapi_contract.py (loaded through
SCHEMATHESIS_HOOKS): NDJSON responses are read line by line, each line checked against the
row schema the document declares, so the results stream is validated, not skipped."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import schemathesis
from schemathesis.core.deserialization import DeserializationContext
from schemathesis.core.transport import Response

NDJSON = "application/x-ndjson"


@schemathesis.deserializer(NDJSON)
def ndjson_rows(context: DeserializationContext, response: Response) -> Any:
    """The first row (schemathesis validates it against the row schema too); every row
    is validated here first. An empty stream has no row to validate: None."""
    schema = _row_schema(context, response.status_code)
    rows = [json.loads(line) for line in response.content.splitlines() if line.strip()]
    for number, row in enumerate(rows, start=1):
        try:
            jsonschema.validate(row, schema)
        except jsonschema.ValidationError as error:
            raise ValueError(f"line {number} violates the row schema: {error.message}") from error
    return rows[0] if rows else None


def _row_schema(context: DeserializationContext, status: int) -> dict[str, Any]:
    responses = context.operation.definition.raw.get("responses", {})
    content = responses.get(str(status), {}).get("content", {})
    schema: dict[str, Any] = content.get(NDJSON, {}).get("schema", {})
    return schema
