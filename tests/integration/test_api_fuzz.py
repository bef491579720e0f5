"""No client input causes a 5xx: random JSON-ish bodies, random bytes, broken Unicode.

Each answer is a 202 (and the screening then reads back) or a 4xx in the one error shape.
SQLite only: the PostgreSQL-specific input (NUL) is covered field by field elsewhere.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.support.in_process_api import Api, assert_error_shape

JSON_HEADERS = {"content-type": "application/json"}
FIELDS = ["informal", "formal", "header", "external_id", "options", "replies"]

texts = st.one_of(
    st.text(),  # no surrogates: those come as JSON escapes below
    st.text(alphabet=st.sampled_from("\x00 \t\n\r\x0bVERDICT:ℕ∀ \u2028\ufeff"), max_size=30),
    st.sampled_from(["", " ", "theorem t : True := by trivial", "VERDICT: FAITHFUL\n"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # unbounded: huge ints included
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)
options = st.one_of(json_values, st.fixed_dictionaries({}, optional={"confirmations": json_values}))
replies = st.one_of(
    json_values,
    st.fixed_dictionaries({}, optional={"translator": json_values, "judge": json_values}),
    st.fixed_dictionaries({"translator": texts, "judge": texts}),
)
field_values = {
    "informal": st.one_of(texts, json_values),
    "formal": st.one_of(texts, json_values),
    "header": st.one_of(texts, json_values),
    "external_id": st.one_of(texts, json_values),
    "options": options,
    "replies": replies,
}
request_dicts = st.builds(
    lambda known, extra: extra | known,
    st.fixed_dictionaries({}, optional=field_values),
    st.dictionaries(texts, json_values, max_size=2),
)
# Near the valid shape, so that many are accepted and go on through intake, the evidence
# checks, the parser and the policy (supplied replies are decided at once).
nearly_valid = st.fixed_dictionaries(
    {"informal": st.text(min_size=1), "formal": st.text(min_size=1)},
    optional={
        "header": texts,
        "external_id": texts,
        "options": st.fixed_dictionaries({}, optional={"confirmations": st.integers(-1, 6)}),
        "replies": st.fixed_dictionaries({"translator": texts, "judge": texts}),
    },
)


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    """A request body: encoded JSON (maybe with a lone surrogate escaped into one of its
    strings, maybe cut short), or arbitrary bytes."""
    kind = draw(st.sampled_from(["nearly_valid", "dict", "value", "surrogate", "cut", "bytes"]))
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    shapes = {"nearly_valid": nearly_valid, "value": json_values}
    value = draw(shapes.get(kind, request_dicts))
    text = json.dumps(value)
    if kind == "surrogate" and '"' in text:
        at = text.index('"') + 1
        text = text[:at] + draw(st.sampled_from(["\\ud800", "\\udfff", "\\ud83d"])) + text[at:]
    if kind == "cut" and text:
        text = text[: draw(st.integers(0, len(text) - 1))]
    return text.encode("utf-8")


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(body=bodies())
async def test_no_body_causes_a_server_error(idle_api: Api, body: bytes) -> None:
    response = await idle_api.client.post("/v1/screenings", content=body, headers=JSON_HEADERS)
    event(f"status {response.status_code}")  # --hypothesis-show-statistics shows the mix
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        assert_error_shape(response.json())
        return
    assert response.status_code == 202, response.text
    screening: dict[str, Any] = response.json()
    stored = await idle_api.client.get(f"/v1/screenings/{screening['id']}")
    assert stored.status_code == 200, stored.text


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    query=st.dictionaries(
        st.sampled_from(["external_id", "outcome", "status", "cursor", "limit"]),
        st.one_of(texts, st.integers().map(str)),
        max_size=4,
    ),
    screening_id=st.text(min_size=1).filter(lambda s: s not in {".", ".."}),
)
async def test_no_query_causes_a_server_error(
    idle_api: Api, query: dict[str, str], screening_id: str
) -> None:
    listing = await idle_api.client.get("/v1/screenings", params=query)
    one = await idle_api.client.get("/v1/screenings/" + quote(screening_id, safe=""))
    for response in (listing, one):
        assert response.status_code < 500, response.text
        if response.status_code >= 400:
            assert_error_shape(response.json())
