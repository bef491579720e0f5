"""faithscreen_client.AsyncClient against the ASGI app in process (its real lifespan, worker and
the scripted provider): typed answers, every page, errors as FaithScreenError, retries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pytest

from faithscreen_client import (
    AsyncClient,
    Backoff,
    Batch,
    BatchResult,
    Calibration,
    FaithScreenError,
    Screening,
)
from tests.support.in_process_api import Api
from tests.support.scripted_openai import FAITHFUL_REPLY, contract_reply

INFORMAL = "For every natural number n, n + 0 = n."
FORMAL = "theorem add_zero' (n : ℕ) : n + 0 = n := by sorry"
PASSING = {"translator": FAITHFUL_REPLY, "judge": contract_reply("FAITHFUL", None)}
MISMATCH = {"translator": contract_reply("MISMATCH"), "judge": contract_reply("MISMATCH", None)}
FAST = Backoff(retries=3, first=0.01, cap=0.05)


@asynccontextmanager
async def client_of(
    api: Api, transport: httpx2.AsyncBaseTransport | None = None
) -> AsyncIterator[AsyncClient]:
    chosen = transport or httpx2.ASGITransport(app=api.app)
    # Loopback: `Flaky` is no in-process transport the client knows, and the key must not
    # go over plain http to another host.
    client = AsyncClient(
        "http://127.0.0.1", "unused", transport=chosen, backoff=FAST, poll_seconds=0.05
    )
    async with client:
        yield client


class Flaky(httpx2.AsyncBaseTransport):
    """Answers the first `failures` requests matching `method` with `failure` (a status,
    or an exception raised before or after the app saw the request); then the app."""

    def __init__(self, api: Api, method: str, failures: int, failure: int | str) -> None:
        self.inner = httpx2.ASGITransport(app=api.app)
        self.method, self.left, self.failure = method, failures, failure
        self.seen: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.seen.append(f"{request.method} {request.url.path}")
        if request.method != self.method or self.left == 0:
            return await self.inner.handle_async_request(request)
        self.left -= 1
        if self.failure == "connect":
            raise httpx2.ConnectError("refused", request=request)
        if self.failure == "lost":  # the app acted on it; its answer never arrived
            await self.inner.handle_async_request(request)
            raise httpx2.ReadError("connection reset", request=request)
        assert isinstance(self.failure, int)
        return httpx2.Response(self.failure, json={"error": {"code": "x", "message": "busy"}})


async def test_screen_waits_for_the_worker_and_returns_the_typed_screening(api: Api) -> None:
    async with client_of(api) as client:
        screening = await client.screen(INFORMAL, FORMAL, external_id="c-1", timeout=120)
    assert isinstance(screening, Screening)
    assert screening.status == "done" and screening.outcome == "passed"
    assert screening.external_id == "c-1"
    assert {review.role for review in screening.reviews} == {"translator", "judge"}


async def test_screen_with_replies_and_no_wait(idle_api: Api) -> None:
    async with client_of(idle_api) as client:
        screening = await client.screen(
            INFORMAL, FORMAL, replies=MISMATCH, label="mismatch", tags=["t1"], wait=False
        )
        assert screening.outcome == "flagged" and "judge_mismatch" in screening.reasons
        assert screening.label == "mismatch" and screening.tags == ["t1"]
        queued = await client.screen(INFORMAL, FORMAL, wait=False)
        assert queued.status == "queued"
        with pytest.raises(FaithScreenError) as waited:
            await client.wait_screening(queued.id, timeout=0)
    assert waited.value.code == "wait_timeout" and waited.value.status is None


async def test_errors_carry_status_code_message_and_details(idle_api: Api) -> None:
    async with client_of(idle_api) as client:
        with pytest.raises(FaithScreenError) as missing:
            await client.get_screening("no-such-id")
        with pytest.raises(FaithScreenError) as invalid:
            await client.screen("", FORMAL, confirmations=-1)
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert "no-such-id" in missing.value.message
    assert (invalid.value.status, invalid.value.code) == (422, "validation_error")
    assert {d["field"] for d in invalid.value.details} >= {"informal", "options.confirmations"}


async def test_list_screenings_follows_every_page(idle_api: Api) -> None:
    async with client_of(idle_api) as client:
        made = [
            (await client.screen(INFORMAL, FORMAL, external_id=f"p{i}", replies=PASSING)).id
            for i in range(5)
        ]
        listed = [s.id async for s in client.list_screenings(page_size=2)]
        passed = [s async for s in client.list_screenings(outcome="passed", page_size=2)]
    assert listed == made[::-1]
    assert len(passed) == 5 and all(s.outcome == "passed" for s in passed)


async def test_a_batch_submitted_waited_streamed_and_calibrated(idle_api: Api) -> None:
    items = [
        {"informal": INFORMAL, "formal": FORMAL, "replies": PASSING, "label": "faithful"},
        {"informal": INFORMAL, "formal": FORMAL + " ", "replies": MISMATCH, "label": "mismatch"},
    ]
    seen: list[int] = []
    async with client_of(idle_api) as client:
        batch = await client.submit_batch(items, name="two")
        done = await client.wait_batch(
            batch.id, timeout=120, on_progress=lambda b: seen.append(b.done)
        )
        results = [line async for line in client.batch_results(batch.id)]
        calibration = await client.calibration(batch.id)
    assert isinstance(batch, Batch) and batch.name == "two" and batch.total == 2
    assert done.done == 2 and seen[-1] == 2
    assert all(isinstance(r, BatchResult) for r in results)
    assert [(r.index, r.outcome) for r in results] == [(0, "passed"), (1, "flagged")]
    assert isinstance(calibration, Calibration) and calibration.labelled == 2


async def test_reads_are_retried_on_503_and_refused_connections(idle_api: Api) -> None:
    async with client_of(idle_api) as plain:
        made = await plain.screen(INFORMAL, FORMAL, replies=PASSING)
    for failure in (503, "connect", "lost"):
        flaky = Flaky(idle_api, "GET", failures=2, failure=failure)
        async with client_of(idle_api, flaky) as client:
            assert (await client.get_screening(made.id)).id == made.id
        assert len(flaky.seen) == 3, (failure, flaky.seen)


async def test_retries_give_up_with_the_last_answer(idle_api: Api) -> None:
    flaky = Flaky(idle_api, "GET", failures=10, failure=503)
    async with client_of(idle_api, flaky) as client:
        with pytest.raises(FaithScreenError) as busy:
            await client.get_screening("anything")
    assert busy.value.status == 503 and len(flaky.seen) == FAST.retries + 1
    gone = Flaky(idle_api, "GET", failures=10, failure="connect")
    async with client_of(idle_api, gone) as client:
        with pytest.raises(FaithScreenError) as unreachable:
            await client.get_screening("anything")
    assert unreachable.value.status is None and unreachable.value.code == "unreachable"


async def test_a_single_screening_whose_answer_was_lost_is_stored_once(idle_api: Api) -> None:
    """The client's own Idempotency-Key makes a retried POST a repeat (issue 33): a 503, a
    lost answer and a connection never made are all retried, and one screening is stored."""
    for failure in (503, "lost", "connect"):
        flaky = Flaky(idle_api, "POST", failures=1, failure=failure)
        async with client_of(idle_api, flaky) as client:
            before = (await idle_api.row_counts())["screenings"]
            assert (await client.screen(INFORMAL, FORMAL, replies=PASSING)).outcome == "passed"
        assert flaky.seen.count("POST /v1/screenings") == 2, failure
        assert (await idle_api.row_counts())["screenings"] == before + 1, failure


async def test_a_batch_whose_answer_was_lost_is_stored_once(idle_api: Api) -> None:
    """The client's own Idempotency-Key makes the retried POST a repeat."""
    flaky = Flaky(idle_api, "POST", failures=1, failure="lost")
    items = [{"informal": INFORMAL, "formal": FORMAL, "replies": PASSING}]
    async with client_of(idle_api, flaky) as client:
        batch = await client.submit_batch(items)
        listed = [b.id async for b in client.list_batches()]
    assert flaky.seen.count("POST /v1/batches") == 2
    assert listed == [batch.id]
    assert (await idle_api.row_counts())["screenings"] == 1
