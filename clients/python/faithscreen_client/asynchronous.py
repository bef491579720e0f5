"""`AsyncClient`: the awaited client, method for method as `Client` (sync.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable
from types import TracebackType
from typing import Unpack

import httpx2

from faithscreen_client import calls, plans
from faithscreen_client.calibration import Calibration
from faithscreen_client.calls import Backoff, Call, ScreeningFields
from faithscreen_client.errors import FaithScreenError
from faithscreen_client.models import (
    Batch,
    BatchListed,
    BatchResult,
    Screening,
    ScreeningListed,
)
from faithscreen_client.plain_http import check_key_transport
from faithscreen_client.plans import Attempt, Emit, Item, Listing, Pause, Reply, Result, Steps


class AsyncClient:
    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx2.Timeout = 30.0,
        backoff: Backoff | None = None,
        poll_seconds: float = 1.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        check_key_transport(base_url, api_key, transport, allow_insecure_http=allow_insecure_http)
        self.base_url = base_url
        self.backoff = backoff or Backoff()
        self.poll_seconds = poll_seconds
        self._http = httpx2.AsyncClient(
            base_url=base_url, headers=calls.headers(api_key), timeout=timeout, transport=transport
        )

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    # ------------------------------------------------------------------- screenings

    async def screen(
        self,
        informal: str,
        formal: str,
        *,
        wait: bool = True,
        # The same signature as Client's (a caller moves between them freely).
        timeout: float = 600.0,  # noqa: ASYNC109
        idempotency_key: str | None = None,
        **fields: Unpack[ScreeningFields],
    ) -> Screening:
        """Submit one pair; with `wait`, poll until it is done (at most `timeout` s).
        `fields`: header, external_id, replies, label, tags, confirmations, priority (all
        optional). `idempotency_key`: sent again later (a pipeline's retry), it gets the
        screening stored first instead of a new one; without it a fresh key is sent, so
        this call's own retries never screen the pair twice."""
        plan = plans.screen(
            informal,
            formal,
            fields,
            wait=wait,
            timeout=timeout,
            poll_seconds=self.poll_seconds,
            idempotency_key=idempotency_key,
        )
        return await self._run(plan)

    async def wait_screening(
        self,
        screening_id: str,
        *,
        timeout: float = 600.0,  # noqa: ASYNC109 (as Client's)
    ) -> Screening:
        plan = plans.wait_screening(screening_id, timeout=timeout, poll_seconds=self.poll_seconds)
        return await self._run(plan)

    async def get_screening(self, screening_id: str) -> Screening:
        return await self._run(plans.get_screening(screening_id))

    async def list_screenings(
        self,
        *,
        external_id: str | None = None,
        outcome: str | None = None,
        status: str | None = None,
        page_size: int = 100,
    ) -> AsyncIterator[ScreeningListed]:
        """Every screening matching the filters, newest first, page after page."""
        filters = {"external_id": external_id, "outcome": outcome, "status": status}
        async for item in self._each(plans.list_screenings(filters, page_size)):
            yield item

    # ---------------------------------------------------------------------- batches

    async def submit_batch(
        self,
        items: Iterable[calls.BatchItem],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        return await self._run(plans.submit_batch(items, name, idempotency_key))

    async def submit_batch_jsonl(
        self,
        lines: bytes | Iterable[bytes],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        """As submit_batch, the items given as JSON Lines bytes (a pairs file's lines)."""
        return await self._run(plans.submit_batch_jsonl(lines, name, idempotency_key))

    async def get_batch(self, batch_id: str) -> Batch:
        return await self._run(plans.get_batch(batch_id))

    async def list_batches(self, *, page_size: int = 100) -> AsyncIterator[BatchListed]:
        async for item in self._each(plans.list_batches(page_size)):
            yield item

    async def wait_batch(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (as Client's)
        on_progress: Callable[[Batch], None] | None = None,
    ) -> Batch:
        """Poll until every item is done; `on_progress` sees each poll's batch."""
        plan = plans.wait_batch(
            batch_id, timeout=timeout, on_progress=on_progress, poll_seconds=self.poll_seconds
        )
        return await self._run(plan)

    async def batch_results(self, batch_id: str) -> AsyncIterator[BatchResult]:
        """Every item's result in submission order, read as the server streams them."""
        async for line in self.batch_result_lines(batch_id):
            yield calls.result_line(line, BatchResult)

    async def batch_result_lines(self, batch_id: str) -> AsyncIterator[bytes]:
        """The results stream's raw JSON lines (what `faithscreen submit` writes)."""
        call = calls.batch_results(batch_id)
        try:
            stream = self._http.stream(call.method, call.path, headers=dict(call.headers))
            async with stream as answer:
                if not answer.is_success:
                    await answer.aread()
                    raise calls.error_of(answer)
                lines = calls.LineSplitter()
                async for chunk in answer.aiter_bytes():
                    for line in lines.feed(chunk):
                        yield line
                for line in lines.end():
                    yield line
        except httpx2.TransportError as error:
            raise calls.unreachable(self.base_url, error) from error

    async def calibration(self, batch_id: str) -> Calibration:
        return await self._run(plans.calibration(batch_id))

    # -------------------------------------------------------------------- transport

    async def _run(self, plan: Steps[Result]) -> Result:
        """Carry a plan out: send its calls, sleep its pauses, answer what it returns."""
        reply: Reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as done:
                result: Result = done.value
                return result
            reply = await self._do(step)

    async def _each(self, listing: Listing[Item]) -> AsyncIterator[Item]:
        """Carry a listing out, yielding the items it emits as each page comes."""
        reply: Reply = None
        while True:
            try:
                step = listing.send(reply)
            except StopIteration:
                return
            if isinstance(step, Emit):
                for item in step.items:
                    yield item
                reply = None
            else:
                reply = await self._do(step)

    async def _do(self, step: Call | Attempt | Pause) -> Reply:
        """One step: a pause slept, one attempt at a call, or a call with its retries."""
        if isinstance(step, Pause):
            await asyncio.sleep(step.seconds)
            return None
        if isinstance(step, Call):
            return await self._run(plans.attempts(step, self.backoff, self.base_url))
        try:
            return await self._request(step.call)
        except httpx2.TransportError as error:
            return error

    async def _request(self, call: Call) -> httpx2.Response:
        return await self._http.request(
            call.method,
            call.path,
            params=call.params,
            json=call.body,
            content=call.content,
            headers=dict(call.headers),
        )


__all__ = ["AsyncClient", "FaithScreenError"]
