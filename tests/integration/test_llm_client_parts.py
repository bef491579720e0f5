"""The LLM client's pure parts: Retry-After, backoff, usage, and refusing an unset provider."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from app.llm import CallResult, LLMClient
from app.llm.body import usage_from_body
from app.llm.retry import (
    BACKOFF_CAP_SECONDS,
    backoff_delay,
    is_retryable_status,
    retry_after_seconds,
)
from app.settings import ProviderSettings

NOW = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({}, None),
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after": "-4"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, float("inf")),  # the longest wait: the client caps it
        ({"retry-after": "1e12"}, 1e12),
        ({"retry-after": "Fri, 31 Dec 99999999999999999999 23:59:59 GMT"}, None),  # overflows
        ({"retry-after": "Wed, 01 Jan 2025 12:02:00 GMT"}, 120.0),
        ({"retry-after": "Wed, 01 Jan 2025 11:00:00 GMT"}, 0.0),  # in the past: now
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),  # the precise one wins
        ({"retry-after-ms": "x", "retry-after": "9"}, 9.0),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers, NOW) == seconds


def test_backoff_doubles_from_half_a_second_up_to_the_cap() -> None:
    delays = [backoff_delay(retry, lambda: 1.0) for retry in range(1, 10)]
    assert delays == [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert BACKOFF_CAP_SECONDS == 30.0


def test_backoff_jitter_scales_the_whole_delay() -> None:
    assert backoff_delay(3, lambda: 0.0) == 0.0
    assert backoff_delay(3, lambda: 0.5) == 1.0


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        *[(400, False), (401, False), (404, False), (407, False), (408, True), (409, True)],
        *[(410, False), (422, False), (429, True), (500, True), (599, True), (600, False)],
    ],
)
def test_retryable_statuses(status: int, retryable: bool) -> None:
    assert is_retryable_status(status) is retryable


def test_usage_keeps_integer_counts_only() -> None:
    body = {
        "usage": {
            "prompt_tokens": 10,
            "completion_tokens": True,
            "total_tokens": "12",
            "completion_tokens_details": {"reasoning_tokens": 4},
        }
    }
    assert usage_from_body(body) == {"prompt_tokens": 10, "reasoning_tokens": 4}


def test_usage_reads_top_level_reasoning_tokens_and_tolerates_absence() -> None:
    assert usage_from_body({"usage": {"reasoning_tokens": 7}}) == {"reasoning_tokens": 7}
    assert usage_from_body({}) == {}
    assert usage_from_body({"usage": None}) == {}


@pytest.mark.parametrize("missing", ["base_url", "model"])
def test_a_client_needs_base_url_and_model(missing: str) -> None:
    values = {"base_url": "http://127.0.0.1:1/v1", "model": "m"} | {missing: None}
    with pytest.raises(ValueError, match="base_url and model"):
        LLMClient(ProviderSettings(**values), concurrency=1)


def test_a_call_not_sent_is_a_failed_call_with_no_attempt() -> None:
    result = CallResult.not_sent("no provider configured for judge", max_tokens=2048)
    assert result.failed and result.error == "no provider configured for judge"
    assert (result.attempts, result.http_status, result.content, result.max_tokens) == (
        0,
        None,
        None,
        2048,
    )
