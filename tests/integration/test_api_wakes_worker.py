"""A request that queues work wakes the worker once, after its transaction commits (a worker
woken before would find no job to claim), and a request that queues none does not."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing

import psycopg
import pytest
from sqlalchemy import make_url

from tests.conftest import libpq_url
from tests.support.batches import no_api_keys, post_batch, queued_item, supplied_item
from tests.support.in_process_api import Api

__all__ = ["no_api_keys"]


def committed_jobs(database_url: str) -> int:
    """Jobs a connection of its own sees: only the committed ones."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        with closing(sqlite3.connect(url.database or "")) as connection:
            return int(connection.execute("SELECT count(*) FROM jobs").fetchone()[0])
    with psycopg.connect(libpq_url(database_url)) as connection:
        row = connection.execute("SELECT count(*) FROM jobs").fetchone()
        return int(row[0]) if row else 0


@pytest.fixture
def wakes(idle_api: Api, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Each time the worker is woken: how many jobs were committed by then."""
    seen: list[int] = []
    url = idle_api.settings.database_url
    monkeypatch.setattr(idle_api.runtime, "notify_worker", lambda: seen.append(committed_jobs(url)))
    yield seen


async def test_a_screening_wakes_the_worker_once_its_job_is_committed(
    idle_api: Api, wakes: list[int]
) -> None:
    body = queued_item(1)
    response = await idle_api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    assert wakes == [1]


async def test_a_batch_wakes_the_worker_once_its_jobs_are_committed(
    idle_api: Api, wakes: list[int]
) -> None:
    await post_batch(idle_api, [queued_item(1), queued_item(2), supplied_item(3)])
    assert wakes == [2]


async def test_a_batch_that_queues_nothing_does_not_wake_the_worker(
    idle_api: Api, wakes: list[int]
) -> None:
    await post_batch(idle_api, [supplied_item(1), supplied_item(2)])
    await post_batch(idle_api, [queued_item(3), {"informal": "no formal"}], expect=422)
    await idle_api.client.get("/v1/batches")
    assert wakes == []
