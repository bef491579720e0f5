"""The scripted OpenAI-compatible server the LLM client and end-to-end tests rely on."""

from __future__ import annotations

import asyncio
import gzip
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from app.contract.parser import parse_reply
from app.vocabulary import ParseStatus, Verdict
from tests.support.scripted_openai import (
    ABSENT,
    FAITHFUL_REPLY,
    BigReply,
    HttpError,
    RawBody,
    RecordedRequest,
    Reply,
    Reset,
    ScriptedOpenAI,
    contract_reply,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


def ask(server: ScriptedOpenAI, text: str = "hello", model: str = "m") -> httpx2.Response:
    payload = {"model": model, "messages": [{"role": "user", "content": text}]}
    return httpx2.post(server.base_url + "/chat/completions", json=payload, timeout=10)


def content(response: httpx2.Response) -> str:
    assert response.status_code == 200, response.text
    value: str = response.json()["choices"][0]["message"]["content"]
    return value


@pytest.mark.parametrize("verdict", [Verdict.FAITHFUL, Verdict.MISMATCH, Verdict.UNCLEAR])
def test_contract_replies_read_as_their_verdict(verdict: Verdict) -> None:
    reading = parse_reply(contract_reply(verdict.value.upper()))
    assert (reading.parse_status, reading.verdict) == (ParseStatus.OK, verdict)
    assert reading.back_translation and reading.issues == "none"


def test_a_contract_reply_without_back_translation_is_the_judge_shape() -> None:
    reply = contract_reply("MISMATCH", back_translation=None, issues="n is not bounded")
    assert reply == "VERDICT: MISMATCH\nISSUES: n is not bounded\n"
    reading = parse_reply(reply)
    assert reading.is_mismatch and reading.back_translation is None


def test_default_reply_is_a_faithful_completion(server: ScriptedOpenAI) -> None:
    body = ask(server, model="judge-model").json()
    assert body["choices"][0]["message"]["content"] == FAITHFUL_REPLY
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["model"] == "judge-model"
    assert set(body["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert parse_reply(FAITHFUL_REPLY).is_faithful


def test_the_first_matching_rule_with_steps_left_answers(server: ScriptedOpenAI) -> None:
    fermat = server.script("Fermat", steps=[Reply("f1"), Reply("f2")])
    judge = server.script(model="judge-m", steps=[Reply("j1")])
    server.script(steps=[Reply("any1")])
    answers = [
        content(ask(server, "about Fermat", model="judge-m")),  # both match: first rule wins
        content(ask(server, "other", model="judge-m")),
        content(ask(server, "Fermat again")),
        content(ask(server, "Fermat once more")),  # Fermat's rule is used up
        content(ask(server, "anything")),  # every rule is used up: the default
    ]
    assert answers == ["f1", "j1", "f2", "any1", FAITHFUL_REPLY]
    assert (fermat.hits, fermat.remaining, judge.hits) == (2, 0, 1)


def test_match_searches_every_message(server: ScriptedOpenAI) -> None:
    server.script("informal: x", steps=[Reply("matched")])
    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "informal: x"}]
    response = httpx2.post(server.base_url + "/chat/completions", json={"messages": messages})
    assert content(response) == "matched"


def test_the_default_may_be_a_function_of_the_request(server: ScriptedOpenAI) -> None:
    def echo(request: RecordedRequest) -> Reply:
        return Reply(request.text.upper())

    server.default = echo
    assert content(ask(server, "shout")) == "SHOUT"


def test_requests_are_recorded(server: ScriptedOpenAI) -> None:
    ask(server, "first", model="m1")
    (request,) = server.wait_for_requests(1)
    assert (request.method, request.path, request.model, request.text) == (
        "POST",
        "/v1/chat/completions",
        "m1",
        "first",
    )
    assert request.headers["content-type"] == "application/json"
    assert request.json["messages"][0]["content"] == "first"


def test_wait_for_requests_gives_up_at_its_deadline(server: ScriptedOpenAI) -> None:
    with pytest.raises(TimeoutError, match="0 of 1 requests"):
        server.wait_for_requests(1, timeout=0.05)


def test_both_paths_answer_and_others_are_404(server: ScriptedOpenAI) -> None:
    root = server.base_url.removesuffix("/v1")
    payload: dict[str, list[object]] = {"messages": []}
    assert httpx2.post(root + "/chat/completions", json=payload).status_code == 200
    assert httpx2.post(root + "/v1/completions", json=payload).status_code == 404
    assert httpx2.get(server.base_url + "/chat/completions").status_code == 404
    assert len(server.requests) == 1  # only chat requests are recorded


def test_http_errors_carry_status_headers_and_an_error_object(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "3"})])
    response = ask(server)
    assert response.status_code == 429
    assert response.headers["retry-after"] == "3"
    assert response.json()["error"]["code"] == 429


def test_any_finish_reason_and_model_are_sent_as_given(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reply(finish_reason="max_tokens", model="m\x00\x1b[2J")])
    server.script(steps=[Reply(finish_reason=None)])
    first, null = ask(server).json(), ask(server).json()
    assert first["choices"][0]["finish_reason"] == "max_tokens"
    assert first["model"] == "m\x00\x1b[2J"
    assert null["choices"][0]["finish_reason"] is None


def test_absent_leaves_the_key_out(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reply(finish_reason=ABSENT, model=ABSENT)])
    body = ask(server).json()
    assert "finish_reason" not in body["choices"][0] and "model" not in body
    assert body["choices"][0]["message"]["content"] == FAITHFUL_REPLY


def test_a_lone_surrogate_goes_as_a_json_escape(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reply(model="m\ud800")])
    response = ask(server)
    assert b"\\ud800" in response.content  # valid UTF-8 on the wire, the escape inside
    assert response.json()["model"] == "m\ud800"


def test_a_raw_body_is_sent_as_is_duplicate_keys_and_all(server: ScriptedOpenAI) -> None:
    text = '{"choices": [1], "choices": [2]}'
    server.script(steps=[RawBody(text)])
    assert ask(server).text == text


def test_a_raw_body_may_be_bytes_with_headers_of_its_own(server: ScriptedOpenAI) -> None:
    server.script(steps=[RawBody(gzip.compress(b'{"a": 1}'), headers={"content-encoding": "gzip"})])
    response = ask(server)
    assert response.headers["content-encoding"] == "gzip"
    assert response.json() == {"a": 1}  # httpx2 decompressed it


def test_a_big_reply_is_a_faithful_completion_of_at_least_its_size(server: ScriptedOpenAI) -> None:
    server.script(steps=[BigReply(3 << 20, filler='é ∀ \\ " ')])
    response = ask(server)
    assert response.headers["content-length"] == str(len(response.content))
    reply = content(response)
    assert len(reply.encode()) >= 3 << 20
    assert reply.startswith('BACK-TRANSLATION: é ∀ \\ " ')
    assert parse_reply(reply).is_faithful
    assert response.json()["choices"][0]["finish_reason"] == "stop"


def test_a_client_that_stops_reading_a_big_reply_ends_it(server: ScriptedOpenAI) -> None:
    server.script(steps=[BigReply(50 << 20)])
    payload = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    url = server.base_url + "/chat/completions"
    with httpx2.stream("POST", url, json=payload, timeout=10) as response:
        first = next(response.iter_bytes())
    assert first.startswith(b'{"id": "chatcmpl-scripted-')
    assert content(ask(server)) == FAITHFUL_REPLY  # the server itself carries on


def test_reset_drops_the_connection_without_a_response(server: ScriptedOpenAI) -> None:
    server.script(steps=[Reset()])
    with pytest.raises(httpx2.TransportError):
        ask(server)
    assert content(ask(server)) == FAITHFUL_REPLY  # the server itself carries on


def test_chunked_request_bodies_are_read(server: ScriptedOpenAI) -> None:
    chunks = [b'{"model": "m", "messages": [{"role": "user", ', b'"content": "chunked"}]}']
    response = httpx2.post(server.base_url + "/chat/completions", content=iter(chunks))
    assert response.status_code == 200
    assert server.requests[0].text == "chunked"


async def test_latency_delays_default_replies_only() -> None:
    with ScriptedOpenAI(latency=30) as server:
        server.script(steps=[Reply("scripted")])
        payload: dict[str, object] = {"messages": [{"role": "user", "content": "x"}]}
        url = server.base_url + "/chat/completions"
        async with httpx2.AsyncClient(timeout=10) as client:
            scripted = await client.post(url, json=payload)
            slow = asyncio.create_task(client.post(url, json=payload))
            async with asyncio.timeout(60):
                while server.in_flight != 1:  # noqa: ASYNC110 - it changes in the server thread
                    await asyncio.sleep(0.01)
            slow.cancel()
            await asyncio.gather(slow, return_exceptions=True)
    assert content(scripted) == "scripted"
    assert slow.cancelled()  # the default reply was still waiting out its latency


def test_standalone_process_answers_with_the_chosen_verdict() -> None:
    command = [sys.executable, "-m", "tests.support.scripted_openai", "--port", "0"]
    command += ["--latency-ms", "5", "--verdict", "MISMATCH"]
    with subprocess.Popen(command, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().split()[-1]
            payload = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
            response = httpx2.post(url + "/chat/completions", json=payload, timeout=10)
        finally:
            proc.terminate()
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert parse_reply(content(response)).is_mismatch
