"""Requests cost nothing before they are authorised, and every body has a cap enforced
while it is read: in-process, with request bodies handed to the app chunk by chunk and
every chunk the app pulls counted.

- no valid key (401), or too low a role (403): not one chunk of the body is pulled,
  whatever Content-Length the client declares;
- JSON bodies are held to FAITHSCREEN_MAX_REQUEST_BYTES, batches to
  FAITHSCREEN_MAX_BATCH_BYTES, /review forms to 256 KiB and the sign-in form to 16 KiB:
  413 `body_too_large` once the cap is passed (or declared past), having pulled at most
  one chunk more than the cap;
- JSON nested deeper than 64 levels is a 400 `malformed_json` for every JSON body, and a
  JSONL line nested so deep is reported by its line like any line that is not JSON;
- a client gone while its body is read is not a 5xx.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from app.models.api_key import AccessRole
from app.settings import Settings
from tests.integration.test_auth_matrix import NEEDED, concrete
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.review_queue import bearer, make_key

GOOD = {"informal": "For every n, n + 0 = n.", "formal": "theorem t (n : ℕ) : n + 0 = n := rfl"}
JSON = {"content-type": "application/json"}
FORM = {"content-type": "application/x-www-form-urlencoded"}
NDJSON = {"content-type": "application/x-ndjson"}
CHUNK = 16 * 1024
FOUR_HUNDRED_MIB = 400 * 1024 * 1024
# Every endpoint that reads a body, with a body it would accept as well formed.
BODIES: dict[tuple[str, str], dict[str, Any]] = {
    ("POST", "/v1/screenings"): GOOD,
    ("POST", "/v1/batches"): {"items": [GOOD]},
    ("POST", "/v1/keys"): {"name": "new-key", "role": "submitter"},
    ("POST", "/v1/rescore"): {"all": True},
    ("POST", "/v1/queue/{item_id}/decision"): {"decision": "faithful"},
    ("POST", "/v1/queue/{item_id}/reopen"): {"note": "again"},
}
JSON_ENDPOINTS = [key for key in BODIES if key[1] != "/v1/batches"]


class CountedBody:
    """A request body the app pulls chunk by chunk (chunked: no Content-Length unless the
    test declares one); `pulled` counts the chunks it took."""

    def __init__(self, chunks: int, first: bytes = b"", chunk: bytes = b" " * CHUNK) -> None:
        self.chunks, self.first, self.chunk = chunks, first, chunk
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for n in range(self.chunks):
            self.pulled += 1
            yield self.first if n == 0 and self.first else self.chunk


@pytest.fixture
def settings(configured_settings: Settings) -> Settings:
    return configured_settings.model_copy(update={"auth": "on"})


@pytest.fixture
async def auth_api(start_api: StartApi, settings: Settings) -> AsyncIterator[Api]:
    async with start_api(settings, with_worker=False) as api:
        yield api


# --- The key and role before the body ------------------------------------------------------


async def test_no_body_is_read_before_the_caller_is_authorised(auth_api: Api) -> None:
    """No key, or a role below the one needed: answered from the headers; not a byte of
    the body is pulled, though the client declares 400 MiB of it."""
    keys = {role: await make_key(auth_api, role, f"key-{role.value}") for role in AccessRole}
    for method, path in BODIES:
        needed = NEEDED[(method, path)]
        callers = {"no key": ({}, 401), "a made-up key": (bearer("fs_" + "x" * 43), 401)}
        callers |= {
            role.value: (bearer(key), 403) for role, key in keys.items() if not role.allows(needed)
        }
        for caller, (headers, status) in callers.items():
            body = CountedBody(chunks=4, first=json.dumps(BODIES[(method, path)]).encode())
            headers = headers | JSON | {"content-length": str(FOUR_HUNDRED_MIB)}
            response = await auth_api.client.request(
                method, concrete(path), content=body, headers=headers
            )
            what = f"{method} {path} with {caller}"
            assert response.status_code == status, f"{what}: {response.text}"
            assert_error_shape(response.json())
            assert body.pulled == 0, f"{what}: the app read {body.pulled} chunks first"


async def test_an_authorised_caller_still_has_its_body_read(auth_api: Api) -> None:
    key = await make_key(auth_api, AccessRole.ADMIN, "root")
    body = CountedBody(chunks=1, first=json.dumps(GOOD).encode())
    response = await auth_api.client.post(
        "/v1/screenings", content=body, headers=bearer(key) | JSON
    )
    assert response.status_code == 202, response.text
    assert body.pulled == 1


# --- Caps, enforced while the body is read -------------------------------------------------


@pytest.fixture
async def small_cap_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    """Auth off; JSON bodies capped at 64 KiB, batches at 256 KiB."""
    update = {"max_request_bytes": 64 * 1024, "max_batch_bytes": 256 * 1024}
    async with start_api(configured_settings.model_copy(update=update), with_worker=False) as api:
        yield api


def too_large(response: httpx2.Response, limit: int, setting: str) -> None:
    assert response.status_code == 413, response.text
    error = assert_error_shape(response.json())
    assert error["code"] == "body_too_large" and error["limit"] == limit, error
    assert str(limit) in error["message"] and setting in error["message"], error


@pytest.mark.parametrize(("method", "path"), JSON_ENDPOINTS)
async def test_a_json_body_past_the_cap_is_refused_as_it_is_read(
    small_cap_api: Api, method: str, path: str
) -> None:
    streamed = CountedBody(chunks=64 * 4)  # 4 MiB of spaces, for a cap of 64 KiB
    response = await small_cap_api.client.request(
        method, concrete(path), content=streamed, headers=JSON
    )
    too_large(response, 64 * 1024, "FAITHSCREEN_MAX_REQUEST_BYTES")
    assert streamed.pulled <= 64 // 16 + 1, streamed.pulled
    declared = CountedBody(chunks=4)
    headers = JSON | {"content-length": str(64 * 1024 + 1)}
    response = await small_cap_api.client.request(
        method, concrete(path), content=declared, headers=headers
    )
    too_large(response, 64 * 1024, "FAITHSCREEN_MAX_REQUEST_BYTES")
    assert declared.pulled == 0


async def test_a_json_body_of_exactly_the_cap_is_read(small_cap_api: Api) -> None:
    limit = small_cap_api.settings.max_request_bytes
    body = json.dumps(GOOD).encode()
    exact = body + b" " * (limit - len(body))
    response = await small_cap_api.client.post("/v1/screenings", content=exact, headers=JSON)
    assert response.status_code == 202, response.text
    response = await small_cap_api.client.post("/v1/screenings", content=exact + b" ", headers=JSON)
    too_large(response, limit, "FAITHSCREEN_MAX_REQUEST_BYTES")


async def test_the_default_cap_holds_the_largest_valid_single_request(
    start_api: StartApi, configured_settings: Settings
) -> None:
    """Three statements at FAITHSCREEN_MAX_STATEMENT_BYTES, every character escaped to six
    bytes of JSON, and two replies at FAITHSCREEN_MAX_REPLY_BYTES written in mathematical
    symbols (three bytes of UTF-8, six of JSON): under 4 MiB, and accepted."""
    assert configured_settings.max_request_bytes == 4 * 1024 * 1024
    limit = configured_settings.max_statement_bytes
    escaped = "\x01" * limit  # one byte of UTF-8, six of JSON ("\u0001")
    request = {"informal": "n" + escaped[1:], "formal": "t" + escaped[1:], "header": escaped}
    reply = "VERDICT: FAITHFUL\n".ljust(configured_settings.max_reply_bytes // 3, "ℕ")
    request |= {"replies": {"translator": reply, "judge": reply}}
    body = json.dumps(request).encode()
    assert 3 * 6 * limit < len(body) <= configured_settings.max_request_bytes
    async with start_api(configured_settings, with_worker=False) as api:
        response = await api.client.post("/v1/screenings", content=body, headers=JSON)
    assert response.status_code == 202, response.text


async def test_batches_keep_their_own_larger_cap(small_cap_api: Api) -> None:
    items = [GOOD | {"external_id": f"item-{n}", "header": "-- " + "x" * 1000} for n in range(90)]
    body = json.dumps({"items": items}).encode()
    assert 64 * 1024 < len(body) < 256 * 1024  # past the JSON cap, under the batch cap
    response = await small_cap_api.client.post("/v1/batches", content=body, headers=JSON)
    assert response.status_code == 202, response.text
    streamed = CountedBody(chunks=64 * 4, first=b"\n")  # 4 MiB of blank JSONL lines
    response = await small_cap_api.client.post("/v1/batches", content=streamed, headers=NDJSON)
    too_large(response, 256 * 1024, "FAITHSCREEN_MAX_BATCH_BYTES")
    assert streamed.pulled <= 256 // 16 + 1, streamed.pulled


async def test_the_sign_in_form_is_held_to_16_kib(auth_api: Api) -> None:
    streamed = CountedBody(chunks=64, first=b"key=", chunk=b"k" * 1024)  # 64 KiB of key
    response = await auth_api.client.post("/review/sign-in", content=streamed, headers=FORM)
    assert response.status_code == 413, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert "larger than the page sends" in response.text
    assert streamed.pulled <= 16 + 1, streamed.pulled


async def test_the_other_review_forms_are_held_to_256_kib_as_they_are_read(
    small_cap_api: Api,
) -> None:
    streamed = CountedBody(chunks=64 * 4, first=b"note=")  # 4 MiB of note
    response = await small_cap_api.client.post(
        "/review/items/1/decision", content=streamed, headers=FORM
    )
    assert response.status_code == 413, response.text
    assert "larger than any page sends" in response.text
    assert streamed.pulled <= 256 // 16 + 1, streamed.pulled


# --- JSON nested too deep ------------------------------------------------------------------


def nested(depth: int) -> bytes:
    """A JSON value exactly `depth` levels deep: lists in a list, ... in an object."""
    return b"[" * depth + b"]" * depth


def deep_request(depth: int) -> bytes:
    """A screening request whose text nests exactly `depth` levels (the object is one)."""
    return json.dumps(GOOD).encode()[:-1] + b', "x": ' + nested(depth - 1) + b"}"


def deep_body(method: str, path: str, depth: int) -> bytes:
    """The endpoint's well-formed body, with an extra field making it `depth` deep."""
    if path == "/v1/batches":
        return b'{"items": [' + deep_request(depth - 2) + b"]}"
    return json.dumps(BODIES[(method, path)]).encode()[:-1] + b', "x": ' + nested(depth - 1) + b"}"


@pytest.mark.parametrize(("method", "path"), list(BODIES))
async def test_json_nested_deeper_than_64_levels_is_malformed(
    idle_api: Api, method: str, path: str
) -> None:
    before = await idle_api.row_counts()
    for depth in (65, 990, 100_000):
        response = await idle_api.client.request(
            method, concrete(path), content=deep_body(method, path, depth), headers=JSON
        )
        assert response.status_code == 400, f"{depth} levels: {response.text}"
        error = assert_error_shape(response.json())
        assert error["code"] == "malformed_json" and "64 levels" in error["message"], error
    response = await idle_api.client.request(
        method, concrete(path), content=deep_body(method, path, 64), headers=JSON
    )
    assert response.status_code == 422, response.text  # read: refused for its extra field
    assert await idle_api.row_counts() == before


@pytest.mark.parametrize("depth", [65, 100_000])
async def test_a_bracket_mountain_that_never_closes_is_malformed(idle_api: Api, depth: int) -> None:
    for path in ("/v1/screenings", "/v1/batches"):
        response = await idle_api.client.post(path, content=b"[" * depth, headers=JSON)
        assert response.status_code == 400, response.text
        assert assert_error_shape(response.json())["code"] == "malformed_json"


async def test_a_jsonl_line_nested_too_deep_is_reported_by_its_line(idle_api: Api) -> None:
    lines = [json.dumps(GOOD).encode(), deep_request(64), deep_request(65), deep_request(990)]
    body = b"\n".join(lines) + b"\n"
    response = await idle_api.client.post("/v1/batches", content=body, headers=NDJSON)
    assert response.status_code == 422, response.text
    details = assert_error_shape(response.json())["details"]
    found = [(d["line"], d["code"]) for d in details]
    assert found == [(2, "extra_forbidden"), (3, "malformed_json"), (4, "malformed_json")]
    assert details[1]["message"] == "line 3 is not valid JSON: it nests deeper than 64 levels"


# --- A client gone while its body is read --------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/screenings", "/v1/batches"])
async def test_a_client_gone_mid_body_is_no_server_error(idle_api: Api, path: str) -> None:
    """What uvicorn hands the app when the connection closes (or is cut off at the client
    deadline) while the body is read: the app answers, into the void, without a 5xx."""
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": b'{"items": [{"informal": "a", ', "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"test")],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    before = await idle_api.row_counts()
    await idle_api.app(scope, receive, send)
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 400, sent
    assert await idle_api.row_counts() == before
