"""A provider's Retry-After is capped (FAITHSCREEN_*_MAX_RETRY_AFTER_SECONDS): the real client,
over loopback, against the scripted provider answering 429 with hostile waits. Before the
cap, `Retry-After: 999999` paused the whole client for 12 days and `1e12` overflowed the
worker's datetime arithmetic."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from app.llm import LLMClient, ProviderBackoff
from app.repositories.provider_waits import WAIT_NOTE
from app.settings import ProviderSettings
from tests.support.scripted_openai import HttpError, Reply, ScriptedOpenAI

MESSAGES = [{"role": "user", "content": "Is the formal statement faithful?"}]
# The default cap, in seconds: past what one call waits (60 s), so the client backs off.
CAP = 300.0
HUGE = [
    ("Retry-After", "999999"),
    ("Retry-After", "1e12"),
    ("Retry-After", "inf"),
    ("Retry-After", "1e400"),  # inf once read as a float
    ("Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"),
    ("retry-after-ms", "1e15"),
]


class Clock:
    """The client's monotonic clock and sleep: a wait moves the clock instead of passing."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as scripted:
        yield scripted


def client_for(server: ScriptedOpenAI, clock: Clock, **overrides: Any) -> LLMClient:
    settings = ProviderSettings(
        base_url=server.base_url,
        model="asked-model",
        timeout_seconds=60.0,
        connect_timeout_seconds=10.0,
        **overrides,
    )
    return LLMClient(settings, concurrency=2, sleep=clock.sleep, rng=lambda: 1.0, monotonic=clock)


def test_the_default_cap_is_five_minutes() -> None:
    assert ProviderSettings().max_retry_after_seconds == CAP


@pytest.mark.parametrize(("header", "value"), HUGE)
async def test_a_huge_wait_is_capped_and_the_client_calls_again_after_the_cap(
    server: ScriptedOpenAI, header: str, value: str
) -> None:
    server.script(steps=[HttpError(429, headers={header: value})])
    clock = Clock()
    async with client_for(server, clock) as client:
        with pytest.raises(ProviderBackoff) as raised:
            await client.complete(MESSAGES)
        assert raised.value.retry_after == CAP
        assert raised.value.asked is not None and raised.value.asked > CAP
        assert str(raised.value).endswith(f"(capped at {CAP:.0f} s)")
        # Every call of the client is paused for the capped wait (a call backs off while
        # more than a minute of it is left, the most one call waits), and no longer.
        clock.now += CAP - 61
        with pytest.raises(ProviderBackoff):
            await client.complete(MESSAGES)
        clock.now += 61
        result = await client.complete(MESSAGES)
    assert not result.failed, result.error
    assert (len(server.requests), clock.waits) == (2, [])


@pytest.mark.parametrize("value", ["nan", "-5", "-inf", "soon", "0x10", ""])
async def test_an_unreadable_or_negative_wait_is_no_pause(
    server: ScriptedOpenAI, value: str
) -> None:
    """NaN, nonsense: the client's own backoff (0.5 s before the first retry); a negative
    wait: at once. Either way the call is asked again and succeeds."""
    server.script(steps=[HttpError(429, headers={"Retry-After": value}), Reply("ok")])
    clock = Clock()
    async with client_for(server, clock) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("ok", 2)
    assert clock.waits in ([0.5], [])


async def test_a_cap_under_a_minute_is_waited_out_inside_the_call(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "1e12"}), Reply("ok")])
    clock = Clock()
    async with client_for(server, clock, max_retry_after_seconds=5) as client:
        result = await client.complete(MESSAGES)
    assert (result.content, result.attempts, clock.waits) == ("ok", 2, [5.0])


async def test_a_wait_within_the_cap_is_honoured_as_asked(server: ScriptedOpenAI) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "120"})])
    clock = Clock()
    async with client_for(server, clock) as client:
        with pytest.raises(ProviderBackoff) as raised:
            await client.complete(MESSAGES)
    assert (raised.value.retry_after, raised.value.asked) == (120, None)
    assert str(raised.value) == "provider asked to wait 120 s"


async def test_the_other_calls_paused_by_a_capped_wait_say_it_was_capped(
    server: ScriptedOpenAI,
) -> None:
    server.script(steps=[HttpError(429, headers={"Retry-After": "999999"})])
    clock = Clock()
    async with client_for(server, clock) as client:
        with pytest.raises(ProviderBackoff):
            await client.complete(MESSAGES)
        clock.now += 100
        async with asyncio.timeout(60):
            with pytest.raises(ProviderBackoff) as other:
                await client.complete(MESSAGES)
    assert other.value.retry_after == CAP - 100
    assert str(other.value) == "provider asked to wait 999999 s (capped at 200 s)"


def test_what_a_waiting_screening_says_begins_with_the_note_metrics_count() -> None:
    for backoff in (ProviderBackoff(120), ProviderBackoff(CAP, asked=1e300)):
        assert backoff.describe().startswith(WAIT_NOTE)
    assert ProviderBackoff(CAP, asked=1e300).describe() == (
        "provider asked to wait 1e+300 s (capped at 300 s)"
    )
