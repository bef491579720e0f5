"""`Client`: the blocking client (see the package docstring for the reference)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
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


class Client:
    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float | httpx2.Timeout = 30.0,
        backoff: Backoff | None = None,
        poll_seconds: float = 1.0,
        transport: httpx2.BaseTransport | None = None,
        allow_insecure_http: bool = False,
    ) -> None:
        check_key_transport(base_url, api_key, transport, allow_insecure_http=allow_insecure_http)
        self.base_url = base_url
        self.backoff = backoff or Backoff()
        self.poll_seconds = poll_seconds
        self._http = httpx2.Client(
            base_url=base_url, headers=calls.headers(api_key), timeout=timeout, transport=transport
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # ------------------------------------------------------------------- screenings

    def screen(
        self,
        informal: str,
        formal: str,
        *,
        wait: bool = True,
        timeout: float = 600.0,
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
        return self._run(plan)

    def wait_screening(self, screening_id: str, *, timeout: float = 600.0) -> Screening:
        plan = plans.wait_screening(screening_id, timeout=timeout, poll_seconds=self.poll_seconds)
        return self._run(plan)

    def get_screening(self, screening_id: str) -> Screening:
        return self._run(plans.get_screening(screening_id))

    def list_screenings(
        self,
        *,
        external_id: str | None = None,
        outcome: str | None = None,
        status: str | None = None,
        page_size: int = 100,
    ) -> Iterator[ScreeningListed]:
        """Every screening matching the filters, newest first, page after page."""
        filters = {"external_id": external_id, "outcome": outcome, "status": status}
        return self._each(plans.list_screenings(filters, page_size))

    # ---------------------------------------------------------------------- batches

    def submit_batch(
        self,
        items: Iterable[calls.BatchItem],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        return self._run(plans.submit_batch(items, name, idempotency_key))

    def submit_batch_jsonl(
        self,
        lines: bytes | Iterable[bytes],
        *,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Batch:
        """As submit_batch, the items given as JSON Lines bytes (a pairs file's lines)."""
        return self._run(plans.submit_batch_jsonl(lines, name, idempotency_key))

    def get_batch(self, batch_id: str) -> Batch:
        return self._run(plans.get_batch(batch_id))

    def list_batches(self, *, page_size: int = 100) -> Iterator[BatchListed]:
        return self._each(plans.list_batches(page_size))

    def wait_batch(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,
        on_progress: Callable[[Batch], None] | None = None,
    ) -> Batch:
        """Poll until every item is done; `on_progress` sees each poll's batch."""
        plan = plans.wait_batch(
            batch_id, timeout=timeout, on_progress=on_progress, poll_seconds=self.poll_seconds
        )
        return self._run(plan)

    def batch_results(self, batch_id: str) -> Iterator[BatchResult]:
        """Every item's result in submission order, read as the server streams them."""
        for line in self.batch_result_lines(batch_id):
            yield calls.result_line(line, BatchResult)

    def batch_result_lines(self, batch_id: str) -> Iterator[bytes]:
        """The results stream's raw JSON lines (what `faithscreen submit` writes)."""
        call = calls.batch_results(batch_id)
        try:
            with self._http.stream(call.method, call.path, headers=dict(call.headers)) as answer:
                if not answer.is_success:
                    answer.read()
                    raise calls.error_of(answer)
                lines = calls.LineSplitter()
                for chunk in answer.iter_bytes():
                    yield from lines.feed(chunk)
                yield from lines.end()
        except httpx2.TransportError as error:
            raise calls.unreachable(self.base_url, error) from error

    def calibration(self, batch_id: str) -> Calibration:
        return self._run(plans.calibration(batch_id))

    # -------------------------------------------------------------------- transport

    def _run(self, plan: Steps[Result]) -> Result:
        """Carry a plan out: send its calls, sleep its pauses, answer what it returns."""
        reply: Reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as done:
                result: Result = done.value
                return result
            reply = self._do(step)

    def _each(self, listing: Listing[Item]) -> Iterator[Item]:
        """Carry a listing out, yielding the items it emits as each page comes."""
        reply: Reply = None
        while True:
            try:
                step = listing.send(reply)
            except StopIteration:
                return
            if isinstance(step, Emit):
                yield from step.items
                reply = None
            else:
                reply = self._do(step)

    def _do(self, step: Call | Attempt | Pause) -> Reply:
        """One step: a pause slept, one attempt at a call, or a call with its retries."""
        if isinstance(step, Pause):
            time.sleep(step.seconds)
            return None
        if isinstance(step, Call):
            return self._run(plans.attempts(step, self.backoff, self.base_url))
        try:
            return self._request(step.call)
        except httpx2.TransportError as error:
            return error

    def _request(self, call: Call) -> httpx2.Response:
        return self._http.request(
            call.method,
            call.path,
            params=call.params,
            json=call.body,
            content=call.content,
            headers=dict(call.headers),
        )


__all__ = ["Client", "FaithScreenError"]
