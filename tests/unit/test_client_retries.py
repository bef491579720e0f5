"""The blocking Client's retry rule through httpx2's MockTransport (the async one is tested
against the app in tests/integration/test_client_inprocess.py): which calls are sent again,
on what, how often, and what is raised in the end."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx2
import pytest

from faithscreen_client import Backoff, Client, FaithScreenError

FAST = Backoff(retries=2, first=0.001, cap=0.002)
Answer = Callable[[httpx2.Request], httpx2.Response]
ERROR = {"error": {"code": "database_unavailable", "message": "retry shortly"}}


def client(answers: list[Answer | Exception], seen: list[str]) -> Client:
    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(f"{request.method} {request.url.path}")
        step = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(step, Exception):
            raise step
        return step(request)

    return Client("http://fs.test", "fs_key", backoff=FAST, transport=httpx2.MockTransport(handle))


def status(code: int, body: object = ERROR) -> Answer:
    return lambda _: httpx2.Response(code, json=body)


def batch_body() -> dict[str, object]:
    return {
        "id": "b",
        "name": None,
        "total": 1,
        "done": 1,
        "status": "done",
        "created_at": "2026-01-01T00:00:00Z",
        "outcomes": {},
        "parse_statuses": {},
        "dead": 0,
        "needed_provider": 0,
        "provider_failed": 0,
        "failures": [],
    }


def test_a_read_is_retried_on_503_until_it_answers() -> None:
    seen: list[str] = []
    with client([status(503), status(503), status(200, batch_body())], seen) as fs:
        assert fs.get_batch("b").id == "b"
    assert seen == ["GET /v1/batches/b"] * 3


def test_the_retries_end_with_the_last_answer_raised() -> None:
    seen: list[str] = []
    with client([status(503)], seen) as fs, pytest.raises(FaithScreenError) as busy:
        fs.get_batch("b")
    assert (busy.value.status, busy.value.code) == (503, "database_unavailable")
    assert len(seen) == FAST.retries + 1


def test_a_4xx_is_not_retried_and_carries_the_error_body() -> None:
    seen: list[str] = []
    body = {"error": {"code": "not_found", "message": "batch x does not exist"}}
    with client([status(404, body)], seen) as fs, pytest.raises(FaithScreenError) as missing:
        fs.get_batch("x")
    assert (missing.value.status, missing.value.code, missing.value.message) == (
        404,
        "not_found",
        "batch x does not exist",
    )
    assert seen == ["GET /v1/batches/x"]


def test_a_single_screening_post_is_sent_again_only_with_its_one_idempotency_key() -> None:
    """A single screening carries an Idempotency-Key (its own, or one the client makes), so a
    503, a lost answer and a refused connection are all sent again with that same key: the
    server answers a repeat with the first screening instead of storing a second."""
    for failure in (status(503), httpx2.ReadError("reset"), httpx2.ConnectError("refused")):
        keys: list[str] = []

        def fail(
            request: httpx2.Request, failure: Answer | Exception = failure, keys: list[str] = keys
        ) -> httpx2.Response:
            keys.append(request.headers["idempotency-key"])
            if isinstance(failure, Exception):
                raise failure
            return failure(request)

        seen: list[str] = []
        with client([fail], seen) as fs, pytest.raises(FaithScreenError):
            fs.screen("i", "f", wait=False)
        assert seen == ["POST /v1/screenings"] * (FAST.retries + 1)
        assert len(set(keys)) == 1 and keys[0].startswith("client-")


def test_a_single_screening_sends_the_callers_idempotency_key() -> None:
    keys: list[str] = []

    def accept(request: httpx2.Request) -> httpx2.Response:
        keys.append(request.headers["idempotency-key"])
        return httpx2.Response(202, json={"id": "s", "status": "queued"})

    seen: list[str] = []
    # The screening's GET that follows is answered 404: only the POST's header is in question.
    with client([accept, status(404)], seen) as fs, pytest.raises(FaithScreenError):
        fs.screen("i", "f", wait=False, idempotency_key="pipeline-7")
    assert seen == ["POST /v1/screenings", "GET /v1/screenings/s"] and keys == ["pipeline-7"]


def test_a_batch_is_sent_again_with_the_same_key() -> None:
    keys: list[str] = []

    def lost(request: httpx2.Request) -> httpx2.Response:
        keys.append(request.headers["idempotency-key"])
        raise httpx2.ReadError("reset", request=request)

    def accept(request: httpx2.Request) -> httpx2.Response:
        keys.append(request.headers["idempotency-key"])
        assert json.loads(request.content) == {"items": [{"informal": "i", "formal": "f"}]}
        return httpx2.Response(202, json={"id": "b", "name": None, "total": 1, "status": "queued"})

    seen: list[str] = []
    with client([lost, accept, status(200, batch_body())], seen) as fs:
        assert fs.submit_batch([{"informal": "i", "formal": "f"}]).id == "b"
    assert seen == ["POST /v1/batches", "POST /v1/batches", "GET /v1/batches/b"]
    assert len(set(keys)) == 1 and len(keys) == 2 and keys[0].startswith("client-")


def test_an_unreachable_server_is_named_without_its_credentials() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("refused", request=request)

    transport = httpx2.MockTransport(refuse)
    fs = Client("http://user:pw-secret@fs.test", backoff=FAST, transport=transport)
    with fs, pytest.raises(FaithScreenError) as gone:
        fs.get_screening("s")
    assert gone.value.status is None and gone.value.code == "unreachable"
    assert "pw-secret" not in str(gone.value) and "fs.test" in str(gone.value)
