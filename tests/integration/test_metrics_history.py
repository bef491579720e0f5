"""A /metrics scrape reads no history (on SQLite and PostgreSQL): its statements name none
of the tables that grow with every screening, and the rows it reads do not grow with the
reviews stored. The totals it reports come from counts the database keeps at write time;
they are checked against the GROUP BYs over all history that /metrics ran before."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import String, case, delete, event, func, select, type_coerce
from sqlalchemy.ext.asyncio import AsyncEngine

from app.models import Job, MetricCount, MetricCountChange, QueueItem, Review, Screening
from app.repositories import reviews
from app.repositories.reviews import ReviewRecord
from app.settings import Settings
from app.vocabulary import JobStatus
from tests.support.batches import post_batch, queued_item, wait_batch_done
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import submit

# Tables whose rows grow with every screening; a scrape may read none of them.
HISTORY = ("reviews", "screenings", "pairs", "decisions", "batches", "readings", "rulings")
_TABLE = re.compile(r"\b(?:FROM|JOIN)\s+\"?([a-z_]+)", re.IGNORECASE)


@pytest.fixture
async def metrics_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    # No worker: every statement on the engine is then the scrape's own.
    settings = configured_settings.model_copy(update={"audit_rate": 0.0})
    async with start_api(settings, with_worker=False) as api:
        yield api


@pytest.fixture
async def working_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    settings = configured_settings.model_copy(update={"audit_rate": 0.0})
    async with start_api(settings) as api:
        yield api


@contextmanager
def statements(engine: AsyncEngine) -> Iterator[list[str]]:
    seen: list[str] = []

    def record(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)


async def scrape(api: Api) -> tuple[str, list[str]]:
    with statements(api.runtime.engine) as seen:
        response = await api.client.get("/metrics")
    assert response.status_code == 200, response.text
    return response.text, seen


def provider_review(screening_id: str, attempt: int) -> ReviewRecord:
    return ReviewRecord(
        screening_id=screening_id,
        role="translator",
        attempt=attempt,
        purpose="review",
        verdict="faithful",
        parse_status="ok",
        parser_version="test",
        model="translator-model",
        usage={"prompt_tokens": 7, "completion_tokens": 2},
        latency_ms=300,
    )


async def store_reviews(api: Api, screening_id: str, attempts: range) -> None:
    async with api.runtime.sessions() as session:
        await reviews.add_many(session, [provider_review(screening_id, a) for a in attempts])
        await session.commit()


async def table_rows(api: Api, model: Any) -> int:
    async with api.runtime.sessions() as session:
        return int((await session.execute(select(func.count()).select_from(model))).scalar_one())


async def test_a_scrape_names_no_history_table_and_reads_no_more_rows_as_reviews_grow(
    metrics_api: Api,
) -> None:
    screening_id = await submit(metrics_api, None, 0, "passed")
    await store_reviews(metrics_api, screening_id, range(2, 4))
    body, seen = await scrape(metrics_api)
    assert 'faithscreen_llm_calls{role="translator",model="translator-model"' in body
    read = {table for statement in seen for table in _TABLE.findall(statement)}
    assert read and not read & set(HISTORY), read
    counted = await table_rows(metrics_api, MetricCount)

    # Hundreds more reviews under the same labels: the scrape issues the same statements,
    # and the totals it reads are as many rows as before (the changes were folded away).
    await store_reviews(metrics_api, screening_id, range(4, 404))
    body, again = await scrape(metrics_api)
    assert 'faithscreen_llm_calls{role="translator",model="translator-model",' in body
    assert [re.sub(r"\s+", " ", s) for s in again] == [re.sub(r"\s+", " ", s) for s in seen]
    assert await table_rows(metrics_api, MetricCount) == counted
    assert await table_rows(metrics_api, MetricCountChange) == 0


async def by_group_by(api: Api) -> dict[str, dict[tuple[str, ...], int]]:
    """What /metrics counted before, by GROUP BY over every stored row."""
    outcome = func.coalesce(type_coerce(Screening.outcome, String()), "none")
    model = case((Review.supplied, "supplied"), else_=func.coalesce(Review.model, "unknown"))
    queries = {
        "faithscreen_screenings": select(outcome, Screening.status, func.count()).group_by(
            outcome, Screening.status
        ),
        "faithscreen_llm_calls": select(
            Review.role, model, Review.parse_status, func.count()
        ).group_by(Review.role, model, Review.parse_status),
        "faithscreen_jobs": select(Job.status, func.count()).group_by(Job.status),
        "faithscreen_review_queue_items": select(QueueItem.status, func.count()).group_by(
            QueueItem.status
        ),
    }
    async with api.runtime.sessions() as session:
        return {
            name: {
                tuple(str(v) for v in row[:-1]): int(row[-1]) for row in await session.execute(q)
            }
            for name, q in queries.items()
        }


_SAMPLE = re.compile(r"^([a-z_]+)\{(.*)\} (\S+)$")
_LABEL = re.compile(r'[a-z_]+="((?:[^"\\]|\\.)*)"')


def from_scrape(body: str, names: Any) -> dict[str, dict[tuple[str, ...], int]]:
    found: dict[str, dict[tuple[str, ...], int]] = {name: {} for name in names}
    for line in body.splitlines():
        match = _SAMPLE.match(line)
        if match and match[1] in found:
            found[match[1]][tuple(_LABEL.findall(match[2]))] = int(float(match[3]))
    return found


async def test_totals_kept_at_write_time_equal_the_group_bys_over_all_history(
    working_api: Api,
) -> None:
    # Supplied replies through the API, screenings the worker runs against the scripted
    # provider, and done jobs deleted (as retention does): every path that writes.
    for n, outcome in enumerate(["passed", "flagged", "needs_review"]):
        await submit(working_api, None, n, outcome)
    batch = await post_batch(working_api, [queued_item(n) for n in range(10, 16)])
    await wait_batch_done(working_api, batch["id"])
    async with working_api.runtime.sessions() as session:
        done = select(Job.id).where(Job.status == JobStatus.DONE).limit(2)
        await session.execute(delete(Job).where(Job.id.in_(done.scalar_subquery())))
        await session.commit()
    expected = await by_group_by(working_api)
    body, _ = await scrape(working_api)
    assert from_scrape(body, expected) == expected
    assert sum(expected["faithscreen_llm_calls"].values()) >= 3 * 2 + 6 * 2
