"""Rejected requests: the status, one error shape, the field named, and nothing stored."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from app.api.errors import error_response
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.scripted_openai import ScriptedOpenAI

PROOFNET = Path("/work/shared/data/pairs/pairs_proofnet_lean4.jsonl")
GOOD: dict[str, Any] = {
    "informal": "For every natural number n, n + 0 = n.",
    "formal": "theorem t (n : ℕ) : n + 0 = n := by sorry",
}
REPLIES = {"translator": "VERDICT: FAITHFUL\nISSUES: none\n", "judge": "VERDICT: FAITHFUL\n"}
DEFAULT_LIMIT = 64 * 1024
PROVIDER_VARIABLES = [
    "FAITHSCREEN_TRANSLATOR_BASE_URL",
    "FAITHSCREEN_TRANSLATOR_MODEL",
    "FAITHSCREEN_JUDGE_BASE_URL",
    "FAITHSCREEN_JUDGE_MODEL",
]


def without(field: str) -> dict[str, Any]:
    return {k: v for k, v in GOOD.items() if k != field}


async def rejected(api: Api, status: int, **request: Any) -> dict[str, Any]:
    """Send a request that must be refused with `status`, and check it stored nothing."""
    before = await api.row_counts()
    response = await api.client.request(request.pop("method", "POST"), **request)
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = assert_error_shape(response.json())
    assert await api.row_counts() == before
    return error


def named_fields(error: dict[str, Any]) -> set[str]:
    return {detail["field"] for detail in error.get("details", [])}


# --- 422: the field is named -------------------------------------------------------------

INVALID_BODIES = [
    pytest.param(without("informal"), "informal", id="informal-missing"),
    pytest.param(without("formal"), "formal", id="formal-missing"),
    pytest.param(GOOD | {"informal": ""}, "informal", id="informal-empty"),
    pytest.param(GOOD | {"formal": " \n\t "}, "formal", id="formal-whitespace"),
    pytest.param(GOOD | {"informal": None}, "informal", id="informal-null"),
    pytest.param(GOOD | {"informal": 42}, "informal", id="informal-number"),
    pytest.param(GOOD | {"formal": ["theorem"]}, "formal", id="formal-list"),
    pytest.param(GOOD | {"header": None}, "header", id="header-null"),
    pytest.param(GOOD | {"external_id": 7}, "external_id", id="external-id-number"),
    pytest.param(GOOD | {"external_id": "x" * 513}, "external_id", id="external-id-long"),
    pytest.param(GOOD | {"colour": "red"}, "colour", id="unknown-field"),
    pytest.param(GOOD | {"options": []}, "options", id="options-list"),
    pytest.param(
        GOOD | {"options": {"confirmations": "1"}}, "options.confirmations", id="conf-string"
    ),
    pytest.param(
        GOOD | {"options": {"confirmations": 1.5}}, "options.confirmations", id="conf-float"
    ),
    pytest.param(
        GOOD | {"options": {"confirmations": True}}, "options.confirmations", id="conf-bool"
    ),
    pytest.param(GOOD | {"options": {"confirmations": -1}}, "options.confirmations", id="conf-<0"),
    pytest.param(GOOD | {"options": {"confirmations": 10**40}}, "options.confirmations", id="huge"),
    pytest.param(GOOD | {"options": {"retries": 1}}, "options.retries", id="options-unknown"),
    pytest.param(GOOD | {"replies": {"translator": "x"}}, "replies.judge", id="replies-half"),
    pytest.param(
        GOOD | {"replies": {"translator": 1, "judge": "x"}}, "replies.translator", id="reply-int"
    ),
]


@pytest.mark.parametrize(("body", "field"), INVALID_BODIES)
async def test_an_invalid_field_is_a_422_naming_it(
    idle_api: Api, body: dict[str, Any], field: str
) -> None:
    error = await rejected(idle_api, 422, url="/v1/screenings", json=body)
    assert error["code"] == "validation_error"
    assert field in named_fields(error)
    assert field in error["message"]


PLAIN_MESSAGES = [
    pytest.param(GOOD | {"formal": ""}, "formal: must not be empty", id="formal-empty"),
    pytest.param(GOOD | {"informal": ""}, "informal: must not be empty", id="informal-empty"),
    pytest.param(
        GOOD | {"informal": "  \n "},
        "informal: must contain a character other than white space",
        id="informal-whitespace",
    ),
    pytest.param(
        GOOD | {"external_id": "x" * 513},
        "external_id: must be at most 512 characters, not 513",
        id="external-id-long",
    ),
    pytest.param(
        GOOD | {"tags": ["t"] * 17}, "tags: must be at most 16 items, not 17", id="tags-many"
    ),
]


@pytest.mark.parametrize(("body", "message"), PLAIN_MESSAGES)
async def test_an_empty_or_long_field_is_refused_in_plain_words(
    idle_api: Api, body: dict[str, Any], message: str
) -> None:
    """Pydantic's own wording ("Value should have at least 1 item after validation",
    "String should match pattern '\\S'") names its internals; `type` keeps its code."""
    error = await rejected(idle_api, 422, url="/v1/screenings", json=body)
    assert error["message"] == message
    assert {d["type"] for d in error["details"]} <= {
        "too_short",
        "too_long",
        "string_pattern_mismatch",
    }


async def test_a_body_that_is_not_json_says_to_send_json(idle_api: Api) -> None:
    form = {"informal": "a", "formal": "b"}
    error = await rejected(idle_api, 422, url="/v1/screenings", data=form)
    assert error["message"] == (
        "body: send one JSON object (with the header Content-Type: application/json)"
    )
    assert "ScreeningRequest" not in json.dumps(error)


NUL_FIELDS = ["informal", "formal", "header", "external_id", "replies.translator", "replies.judge"]


def with_text(field: str, text: str) -> dict[str, Any]:
    body: dict[str, Any] = GOOD | {"replies": dict(REPLIES)}
    if field.startswith("replies."):
        body["replies"][field.removeprefix("replies.")] = text
    else:
        body[field] = text
    return body


@pytest.mark.parametrize("field", NUL_FIELDS)
async def test_a_nul_character_is_a_422_naming_the_field(idle_api: Api, field: str) -> None:
    """PostgreSQL cannot store U+0000 in text: refused up front, on every backend."""
    body = with_text(field, "theorem t : True := by\x00 trivial")
    error = await rejected(idle_api, 422, url="/v1/screenings", json=body)
    assert field in named_fields(error) and field in error["message"]


@pytest.mark.parametrize("field", NUL_FIELDS)
async def test_a_lone_surrogate_is_a_422_naming_the_field(idle_api: Api, field: str) -> None:
    """JSON may escape half a surrogate pair ("\\ud800"); no database can store it."""
    text = json.dumps(with_text(field, "theorem t : True := SURROGATE"))
    body = text.replace("SURROGATE", "\\ud800")
    headers = {"content-type": "application/json"}
    error = await rejected(idle_api, 422, url="/v1/screenings", content=body, headers=headers)
    assert field in named_fields(error) and field in error["message"]


@pytest.mark.parametrize("where", ["", "options", "replies"])
async def test_a_field_name_with_a_lone_surrogate_is_a_422(idle_api: Api, where: str) -> None:
    unknown = '{"x\\ud800": 1}'
    body = '{"informal": "a", "formal": "b", "x\\ud800": 1}'
    if where:
        body = f'{{"informal": "a", "formal": "b", "{where}": {unknown}}}'
    headers = {"content-type": "application/json"}
    error = await rejected(idle_api, 422, url="/v1/screenings", content=body, headers=headers)
    assert named_fields(error) == {where or "body"}


def test_an_error_echoing_a_lone_surrogate_still_renders() -> None:
    response = error_response(404, "not_found", "screening x\ud800 does not exist")
    assert json.loads(response.body)["error"]["message"] == "screening x\ud800 does not exist"


@pytest.fixture
def null_informal_rows() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in PROOFNET.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["informal"] is None]


async def test_a_null_informal_statement_from_the_shared_data_is_a_422(
    idle_api: Api, null_informal_rows: list[dict[str, Any]]
) -> None:
    assert len(null_informal_rows) == 3
    for row in null_informal_rows:
        body = {k: row[k] for k in ("informal", "formal", "header")} | {"external_id": row["id"]}
        error = await rejected(idle_api, 422, url="/v1/screenings", json=body)
        assert named_fields(error) == {"informal"}


@pytest.mark.parametrize(
    "body", [b"[]", b'[{"informal": "a", "formal": "b"}]', b'"text"', b"42", b"null", b""]
)
async def test_a_body_that_is_not_an_object_is_a_422(idle_api: Api, body: bytes) -> None:
    headers = {"content-type": "application/json"}
    await rejected(idle_api, 422, url="/v1/screenings", content=body, headers=headers)


@pytest.mark.parametrize(
    "body", [b'{"informal": ', b"{'informal': 'a'}", b"\xff\xfe\x00", b'{"a": 1}}', b"NaN-ish"]
)
async def test_malformed_json_is_a_400(idle_api: Api, body: bytes) -> None:
    headers = {"content-type": "application/json"}
    await rejected(idle_api, 400, url="/v1/screenings", content=body, headers=headers)


HOSTILE_BODIES = [
    pytest.param(b"[" * 100_000 + b"]" * 100_000, id="nested-too-deep-to-parse"),
    pytest.param(b'{"informal": ' + b"[" * 500 + b"]" * 500 + b"}", id="nested-field"),
    pytest.param(b'{"informal": "a", "formal": "b", "x": ' + b"9" * 5000 + b"}", id="5000-digits"),
    pytest.param(b'{"informal": NaN, "formal": Infinity}', id="nan"),
    pytest.param(b'{"informal": "a", "formal": "b", "options": {"confirmations": NaN}}', id="nan2"),
    pytest.param(b'{"informal": "a", "informal": 1, "formal": "b"}', id="duplicate-key"),
]


@pytest.mark.parametrize("body", HOSTILE_BODIES)
async def test_a_hostile_body_is_refused_in_the_error_shape(idle_api: Api, body: bytes) -> None:
    headers = {"content-type": "application/json"}
    before = await idle_api.row_counts()
    response = await idle_api.client.post("/v1/screenings", content=body, headers=headers)
    assert response.status_code in (400, 422), response.text
    assert_error_shape(response.json())
    assert await idle_api.row_counts() == before


async def test_a_json_body_sent_as_plain_text_is_refused(idle_api: Api) -> None:
    headers = {"content-type": "text/plain"}
    await rejected(idle_api, 422, url="/v1/screenings", content=json.dumps(GOOD), headers=headers)


async def test_confirmations_with_supplied_replies_are_a_422(idle_api: Api) -> None:
    body = GOOD | {"replies": REPLIES, "options": {"confirmations": 1}}
    error = await rejected(idle_api, 422, url="/v1/screenings", json=body)
    assert "options.confirmations" in error["message"]


# --- 413: statements over the limit --------------------------------------------------------


@pytest.mark.parametrize("field", ["informal", "formal", "header"])
async def test_a_statement_over_the_limit_in_utf8_bytes_is_a_413(idle_api: Api, field: str) -> None:
    # 21 846 characters, 65 538 bytes: a count of characters would let it through.
    body = GOOD | {field: "ℕ" * (DEFAULT_LIMIT // 3 + 1)}
    error = await rejected(idle_api, 413, url="/v1/screenings", json=body)
    assert error["code"] == "payload_too_large"
    assert field in error["message"] and str(DEFAULT_LIMIT) in error["message"]
    assert "FAITHSCREEN_MAX_STATEMENT_BYTES" in error["message"]


async def test_a_statement_of_exactly_the_limit_is_accepted(idle_api: Api) -> None:
    body = GOOD | {"informal": "ℕ" * (DEFAULT_LIMIT // 3) + "n"}  # 65 536 bytes
    response = await idle_api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text


async def test_the_limit_is_configurable(
    start_api: StartApi, configured_settings: Settings
) -> None:
    settings = configured_settings.model_copy(update={"max_statement_bytes": 100})
    async with start_api(settings, with_worker=False) as api:
        error = await rejected(api, 413, url="/v1/screenings", json=GOOD | {"formal": "x" * 101})
        assert "100 bytes" in error["message"]
        response = await api.client.post("/v1/screenings", json=GOOD | {"formal": "x" * 100})
        assert response.status_code == 202


# --- No provider ---------------------------------------------------------------------------


async def test_with_no_provider_a_pair_without_replies_names_the_variables(bare_api: Api) -> None:
    error = await rejected(bare_api, 409, url="/v1/screenings", json=GOOD)
    assert error["code"] == "provider_not_configured"
    for variable in PROVIDER_VARIABLES:
        assert variable in error["message"]
    assert "replies" in error["message"]


async def test_with_no_provider_supplied_replies_still_work(bare_api: Api) -> None:
    response = await bare_api.client.post("/v1/screenings", json=GOOD | {"replies": REPLIES})
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "done"


async def test_one_missing_role_is_named_alone(
    start_api: StartApi, unconfigured_settings: Settings, scripted_openai: ScriptedOpenAI
) -> None:
    translator = unconfigured_settings.translator.model_copy(
        update={"base_url": scripted_openai.base_url, "model": "m"}
    )
    settings = unconfigured_settings.model_copy(update={"translator": translator})
    async with start_api(settings, with_worker=False) as api:
        error = await rejected(api, 409, url="/v1/screenings", json=GOOD)
    assert "FAITHSCREEN_JUDGE_BASE_URL" in error["message"]
    assert "FAITHSCREEN_TRANSLATOR" not in error["message"]


# --- Reading: unknown ids, bad queries, unknown routes -------------------------------------


def cursor_of(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "!!!",
        "%%%",
        cursor_of("no separator"),
        cursor_of("2024-01-01T00:00:00|naive"),
        cursor_of("not a date|id"),
        cursor_of("2024-01-01T00:00:00+00:00|"),
        cursor_of("2024-01-01T00:00:00+00:00|nul\x00id"),
        cursor_of("0001-01-01T00:00:00+14:00|underflow"),
        cursor_of("9999-12-31T23:59:59-14:00|overflow"),
    ],
)
async def test_a_garbage_cursor_is_a_422(idle_api: Api, cursor: str) -> None:
    error = await rejected(
        idle_api, 422, method="GET", url="/v1/screenings", params={"cursor": cursor}
    )
    assert "cursor" in error["message"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 501}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"outcome": "maybe"}, "outcome"),
        ({"status": "lost"}, "status"),
        ({"external_id": "nul\x00"}, "external_id"),
    ],
)
async def test_a_bad_listing_query_is_a_422_naming_it(
    idle_api: Api, params: dict[str, Any], field: str
) -> None:
    error = await rejected(idle_api, 422, method="GET", url="/v1/screenings", params=params)
    assert field in error["message"]


@pytest.mark.parametrize(
    "screening_id", ["00000000-0000-0000-0000-000000000000", "nope", "x" * 300, "nul%00"]
)
async def test_an_unknown_screening_is_a_404(idle_api: Api, screening_id: str) -> None:
    error = await rejected(idle_api, 404, method="GET", url=f"/v1/screenings/{screening_id}")
    assert error["code"] == "not_found"


@pytest.mark.parametrize(
    ("method", "url", "status"),
    [
        ("GET", "/v2/screenings", 404),
        ("GET", "/", 404),
        ("POST", "/v1/screenings/abc", 405),
        ("DELETE", "/v1/screenings", 405),
    ],
)
async def test_unknown_routes_share_the_error_shape(
    idle_api: Api, method: str, url: str, status: int
) -> None:
    error = await rejected(idle_api, status, method=method, url=url)
    if status == 404:  # a typo, or the address alone: where to look instead
        assert error["message"] == (
            f"no endpoint GET {url}: the API's endpoints are listed at /docs, "
            "the review pages start at /review"
        )


async def test_a_405_says_which_methods_are_allowed(idle_api: Api) -> None:
    response = await idle_api.client.delete("/v1/screenings")
    assert response.status_code == 405
    # Starlette names the methods of the first route matching the path, so not always all.
    assert "POST" in response.headers["allow"]
