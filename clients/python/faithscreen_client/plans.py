"""Each client method's steps written once, as a plan: a generator that yields the `Call`s to
send and the `Pause`s to wait, is sent each call's response back, and returns what the
method answers (a listing emits its items instead). A call's retries are a plan too
(`attempts`). `Client` and `AsyncClient` only carry the steps out through their transport,
one blocking and one awaited, so the two cannot drift apart."""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import httpx2

from faithscreen_client import calls
from faithscreen_client.calibration import Calibration
from faithscreen_client.calls import DONE, Backoff, Call, Model, ScreeningFields
from faithscreen_client.models import (
    Accepted,
    Batch,
    BatchAccepted,
    BatchListed,
    BatchPage,
    Screening,
    ScreeningListed,
    ScreeningPage,
)

Result = TypeVar("Result")
Item = TypeVar("Item")
Item_co = TypeVar("Item_co", covariant=True)


@dataclass(frozen=True)
class Pause:
    """Wait this long before the next step (between polls)."""

    seconds: float


@dataclass(frozen=True)
class Attempt:
    """Send `call` once: the plan is sent its response, or the transport's error."""

    call: Call


@dataclass(frozen=True)
class Emit(Generic[Item]):
    """Hand these items to the caller of a listing before the next step."""

    items: Sequence[Item]


# What a plan is sent back: a Call's response (retries done), an Attempt's response or
# transport error, None after a Pause or an Emit.
Reply = httpx2.Response | httpx2.TransportError | None
Plan = Generator[Call | Pause, Reply, Result]
Listing = Generator[Call | Emit[Item], Reply, None]
# What a client carries out: a plan, or the attempts at one of its calls.
Steps = Generator[Call | Attempt | Pause, Reply, Result]


class Page(Protocol[Item_co]):
    @property
    def items(self) -> Sequence[Item_co]: ...
    @property
    def next_cursor(self) -> str | None: ...


def fetch(call: Call, model: type[Model]) -> Generator[Call, Reply, Model]:
    """Send `call` and read its answer as `model` (FaithScreenError when it is an error)."""
    response = yield call
    assert isinstance(response, httpx2.Response)  # a Call is answered with its response
    return calls.read(response, model)


def attempts(call: Call, backoff: Backoff, base_url: str) -> Steps[httpx2.Response]:
    """`call` sent until it is answered, or until `backoff` says a failure is final
    (calls.retryable); no answer at all is FaithScreenError `unreachable`."""
    attempt = 0
    while True:
        outcome = yield Attempt(call)
        error = outcome if isinstance(outcome, httpx2.TransportError) else None
        response = outcome if isinstance(outcome, httpx2.Response) else None
        delay = backoff.next_delay(call, attempt, error, response)
        if delay is None:
            return calls.answer(base_url, error, response)
        yield Pause(delay)
        attempt += 1


# ------------------------------------------------------------------- screenings


def screen(
    informal: str,
    formal: str,
    fields: ScreeningFields,
    *,
    wait: bool,
    timeout: float,
    poll_seconds: float,
    idempotency_key: str | None = None,
) -> Plan[Screening]:
    body = calls.screening_body(informal, formal, **fields)
    accepted = yield from fetch(calls.submit_screening(body, idempotency_key), Accepted)
    if not wait:
        return (yield from get_screening(accepted.id))
    return (yield from wait_screening(accepted.id, timeout=timeout, poll_seconds=poll_seconds))


def wait_screening(screening_id: str, *, timeout: float, poll_seconds: float) -> Plan[Screening]:
    deadline = time.monotonic() + timeout
    while True:
        screening = yield from get_screening(screening_id)
        if screening.status == DONE:
            return screening
        if time.monotonic() >= deadline:
            raise calls.wait_timeout(f"screening {screening_id}", timeout)
        yield Pause(poll_seconds)


def get_screening(screening_id: str) -> Plan[Screening]:
    return (yield from fetch(calls.get_screening(screening_id), Screening))


def list_screenings(filters: Mapping[str, Any], page_size: int) -> Listing[ScreeningListed]:
    return every_page(
        lambda cursor: calls.list_screenings(filters, cursor, page_size),
        lambda response: calls.read(response, ScreeningPage),
    )


# ---------------------------------------------------------------------- batches


def submit_batch(
    items: Iterable[calls.BatchItem],
    name: str | None,
    idempotency_key: str | None,
) -> Plan[Batch]:
    return (yield from submitted(calls.submit_batch(items, name, idempotency_key)))


def submit_batch_jsonl(
    lines: bytes | Iterable[bytes], name: str | None, idempotency_key: str | None
) -> Plan[Batch]:
    return (yield from submitted(calls.submit_batch_jsonl(lines, name, idempotency_key)))


def submitted(call: Call) -> Plan[Batch]:
    """The batch as stored, once `call` (a submission) is accepted."""
    accepted = yield from fetch(call, BatchAccepted)
    return (yield from get_batch(accepted.id))


def get_batch(batch_id: str) -> Plan[Batch]:
    return (yield from fetch(calls.get_batch(batch_id), Batch))


def list_batches(page_size: int) -> Listing[BatchListed]:
    return every_page(
        lambda cursor: calls.list_batches(cursor, page_size),
        lambda response: calls.read(response, BatchPage),
    )


def wait_batch(
    batch_id: str,
    *,
    timeout: float | None,
    on_progress: Callable[[Batch], None] | None,
    poll_seconds: float,
) -> Plan[Batch]:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        batch = yield from get_batch(batch_id)
        if on_progress is not None:
            on_progress(batch)
        if batch.done >= batch.total:
            return batch
        if deadline is not None and time.monotonic() >= deadline:
            raise calls.wait_timeout(f"batch {batch_id}", timeout or 0.0)
        yield Pause(poll_seconds)


def calibration(batch_id: str) -> Plan[Calibration]:
    return (yield from fetch(calls.calibration(batch_id), Calibration))


def every_page(
    call_at: Callable[[str | None], Call], read_page: Callable[[httpx2.Response], Page[Item]]
) -> Listing[Item]:
    """Every item of a keyset-paginated listing, following `next_cursor` to the end."""
    cursor: str | None = None
    while True:
        response = yield call_at(cursor)
        assert isinstance(response, httpx2.Response)  # a Call is answered with its response
        page = read_page(response)
        yield Emit(page.items)
        if page.next_cursor is None:
            return
        cursor = page.next_cursor
