"""`AsyncClient`: the awaited client, method for method as `Client` (app/client/sync.py)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

import httpx2

from app.api.batch_schemas import BatchPage
from app.api.schemas import ScreeningPage
from app.client import calls
from app.client.calls import DONE, Backoff, Call
from app.client.errors import FaithScreenError
from app.client.models import (
    Accepted,
    Batch,
    BatchAccepted,
    BatchListed,
    BatchResult,
    Calibration,
    Screening,
    ScreeningListed,
)
from app.intake.requests import ScreeningRequest


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
    ) -> None:
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
        header: str | None = None,
        external_id: str | None = None,
        replies: Mapping[str, Any] | None = None,
        label: str | None = None,
        tags: Iterable[str] | None = None,
        confirmations: int | None = None,
        wait: bool = True,
        # The same signature as Client's (a caller moves between them freely).
        timeout: float = 600.0,  # noqa: ASYNC109
    ) -> Screening:
        """Submit one pair; with `wait`, poll until it is done (at most `timeout` s)."""
        body = calls.screening_body(
            informal,
            formal,
            header=header,
            external_id=external_id,
            replies=replies,
            label=label,
            tags=tags,
            confirmations=confirmations,
        )
        accepted = calls.read(await self._send(calls.submit_screening(body)), Accepted)
        if not wait:
            return await self.get_screening(accepted.id)
        return await self.wait_screening(accepted.id, timeout=timeout)

    async def wait_screening(
        self,
        screening_id: str,
        *,
        timeout: float = 600.0,  # noqa: ASYNC109 (as Client's)
    ) -> Screening:
        deadline = time.monotonic() + timeout
        while True:
            screening = await self.get_screening(screening_id)
            if screening.status == DONE:
                return screening
            if time.monotonic() >= deadline:
                raise calls.wait_timeout(f"screening {screening_id}", timeout)
            await asyncio.sleep(self.poll_seconds)

    async def get_screening(self, screening_id: str) -> Screening:
        return calls.read(await self._send(calls.get_screening(screening_id)), Screening)

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
        cursor: str | None = None
        while True:
            call = calls.list_screenings(filters, cursor, page_size)
            page = calls.read(await self._send(call), ScreeningPage)
            for item in page.items:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # ---------------------------------------------------------------------- batches

    async def submit_batch(
        self,
        items: Iterable[ScreeningRequest | Mapping[str, Any]],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        call = calls.submit_batch(items, name, idempotency_key)
        accepted = calls.read(await self._send(call), BatchAccepted)
        return await self.get_batch(accepted.id)

    async def submit_batch_jsonl(
        self,
        lines: bytes | Iterable[bytes],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        """As submit_batch, the items given as JSON Lines bytes (a pairs file's lines)."""
        call = calls.submit_batch_jsonl(lines, name, idempotency_key)
        accepted = calls.read(await self._send(call), BatchAccepted)
        return await self.get_batch(accepted.id)

    async def get_batch(self, batch_id: str) -> Batch:
        return calls.read(await self._send(calls.get_batch(batch_id)), Batch)

    async def list_batches(self, *, page_size: int = 100) -> AsyncIterator[BatchListed]:
        cursor: str | None = None
        while True:
            page = calls.read(await self._send(calls.list_batches(cursor, page_size)), BatchPage)
            for item in page.items:
                yield item
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    async def wait_batch(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (as Client's)
        on_progress: Callable[[Batch], None] | None = None,
    ) -> Batch:
        """Poll until every item is done; `on_progress` sees each poll's batch."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            batch = await self.get_batch(batch_id)
            if on_progress is not None:
                on_progress(batch)
            if batch.done >= batch.total:
                return batch
            if deadline is not None and time.monotonic() >= deadline:
                raise calls.wait_timeout(f"batch {batch_id}", timeout or 0.0)
            await asyncio.sleep(self.poll_seconds)

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
                async for line in answer.aiter_lines():
                    if line.strip():
                        yield line.encode()
        except httpx2.TransportError as error:
            raise calls.unreachable(self.base_url, error) from error

    async def calibration(self, batch_id: str) -> Calibration:
        return calls.read(await self._send(calls.calibration(batch_id)), Calibration)

    # -------------------------------------------------------------------- transport

    async def _send(self, call: Call) -> httpx2.Response:
        for attempt in itertools.count():
            error: Exception | None = None
            response: httpx2.Response | None = None
            try:
                response = await self._request(call)
            except httpx2.TransportError as failed:
                error = failed
            delay = self.backoff.next_delay(call, attempt, error, response)
            if delay is None:
                break
            await asyncio.sleep(delay)
        return calls.answer(self.base_url, error, response)

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
