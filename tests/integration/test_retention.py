"""Retention on SQLite and PostgreSQL: `faithscreen db prune --before DATE` clears old
reviews' prompts and nothing else (every other column, the raw reply byte for byte
included, stays), the database refuses every other change to a review, a re-score after a
prune reads the replies as before, and the workers remove done jobs past
FAITHSCREEN_JOB_RETENTION_DAYS (and nothing else)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from sqlalchemy import Table, func, null, select, text, update
from sqlalchemy.exc import DBAPIError
from typer.testing import CliRunner

from app.cli.root import cli
from app.models import Job, Review
from app.models.review import ReviewIsAppendOnly
from app.settings import Settings
from app.vocabulary import JobStatus
from tests.support.batches import (
    no_api_keys,  # noqa: F401 (an autouse fixture)
    post_batch,
    queued_item,
    wait_batch_done,
)
from tests.support.in_process_api import Api, StartApi

REVIEWS = cast(Table, Review.__table__)


async def screened(api: Api, n: int = 3) -> str:
    batch = await post_batch(api, [queued_item(k) for k in range(n)])
    await wait_batch_done(api, batch["id"])
    return str(batch["id"])


async def stored_reviews(api: Api) -> list[dict[str, Any]]:
    async with api.runtime.sessions() as session:
        rows = await session.execute(select(REVIEWS).order_by(REVIEWS.c.id))
        return [dict(row._mapping) for row in rows]


def prune(database_url: str, before: str) -> Any:
    args = ["db", "prune", "--before", before, "--database-url", database_url]
    return CliRunner().invoke(cli, args)


async def test_prune_clears_old_prompts_and_keeps_every_reply_and_field(
    api: Api, database_url: str
) -> None:
    batch_id = await screened(api)
    before = await stored_reviews(api)
    prompted = [row["id"] for row in before if row["messages"] is not None]
    assert len(prompted) >= 6  # a translator and a judge call per pair at least

    # --before takes whole seconds: the next one after the last review, once it has passed.
    last = max(row["created_at"] for row in before)
    moment = last.replace(microsecond=0) + timedelta(seconds=1)
    # Waiting for the clock to pass a known moment (under a second), not for work.
    await asyncio.sleep(max(0.0, (moment - datetime.now(UTC)).total_seconds()) + 0.01)
    cutoff = moment.replace(tzinfo=None).isoformat(timespec="seconds")
    result = await asyncio.to_thread(prune, database_url, cutoff)
    assert result.exit_code == 0, result.output
    assert f"cleared the prompts of {len(prompted)} reviews" in result.stdout

    after = await stored_reviews(api)
    assert [row["messages"] for row in after] == [None] * len(before)
    for old, new in zip(before, after, strict=True):
        assert {k: v for k, v in new.items() if k != "messages"} == {
            k: v for k, v in old.items() if k != "messages"
        }
        assert (new["raw_response"] or "").encode("utf-8", "surrogatepass") == (
            old["raw_response"] or ""
        ).encode("utf-8", "surrogatepass")
    assert all(row["messages_sha256"] for row in after if row["id"] in prompted)

    # Replies, not prompts, are what a re-score reads: it decides every screening again.
    response = await api.client.post("/v1/rescore", json={"batch_id": batch_id})
    assert response.status_code == 200, response.text
    diff = response.json()
    assert (diff["considered"], diff["unchanged"], diff["skipped"]) == (3, 3, {})

    again = await asyncio.to_thread(prune, database_url, cutoff)
    assert again.exit_code == 0 and "cleared the prompts of 0 reviews" in again.stdout


async def test_a_prune_leaves_reviews_stored_after_its_date(api: Api, database_url: str) -> None:
    await screened(api, 1)
    result = await asyncio.to_thread(prune, database_url, "2000-01-01")
    assert result.exit_code == 0 and "of 0 reviews" in result.stdout
    assert all(row["messages"] is not None for row in await stored_reviews(api))


def test_a_date_in_the_future_is_refused(database_url: str) -> None:
    result = prune(database_url, (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%d"))
    assert result.exit_code == 2
    assert "future" in result.output


# Every column but `messages`, with a value it could be rewritten to.
REWRITES: dict[str, Any] = {
    "raw_response": "VERDICT: MISMATCH",
    "raw_body": "{}",
    "verdict": "mismatch",
    "parse_status": "missing",
    "back_translation": "rewritten",
    "messages_sha256": "0" * 64,
    "prompt_version": "rewritten",
    "parser_version": "rewritten",
    "model": "rewritten",
    "usage": {"prompt_tokens": 1},
    "latency_ms": 1,
    "evidential": False,
    "attempt": 99,
    "id": 10**9,
    "screening_id": "rewritten",
    "role": "judge",
    "judge_name": "rewritten",
    "purpose": "confirmation",
    "issues": "rewritten",
    "finish_reason": "rewritten",
    "refusal": "rewritten",
    "http_status": 599,
    "error": "rewritten",
    "supplied": True,
    "max_tokens": 7,
    "reply_format": "json",
    "grammar_version": "rewritten",
    "created_at": datetime(2000, 1, 1, tzinfo=UTC),
}
# Every column but the prompt: a trigger forgetting one fails below.
assert set(REWRITES) | {"messages"} == {column.name for column in REVIEWS.columns}


async def test_any_other_update_of_a_review_is_refused(api: Api) -> None:
    await screened(api, 1)
    rows = await stored_reviews(api)
    # The translator's: REWRITES' values (role `judge` among them) all differ from its own.
    review_id = next(r["id"] for r in rows if r["messages"] and r["role"] == "translator")
    for column, value in sorted(REWRITES.items()):
        # Alone, and alongside clearing the prompt (a prune cannot carry another change).
        for values in ({column: value}, {column: value, "messages": null()}):
            async with api.runtime.sessions() as session:
                statement = update(REVIEWS).where(REVIEWS.c.id == review_id).values(values)
                with pytest.raises(DBAPIError, match="append-only"):
                    await session.execute(statement)
                await session.rollback()
    assert next(r for r in await stored_reviews(api) if r["id"] == review_id)["messages"]


async def test_a_prompt_may_be_cleared_but_never_rewritten_or_deleted(api: Api) -> None:
    await screened(api, 1)
    review_id = next(row["id"] for row in await stored_reviews(api) if row["messages"])
    refused = [
        update(REVIEWS).where(REVIEWS.c.id == review_id).values(messages=[{"role": "user"}]),
        text("DELETE FROM reviews WHERE id = :id").bindparams(id=review_id),
    ]
    for statement in refused:
        async with api.runtime.sessions() as session:
            with pytest.raises(DBAPIError, match="append-only"):
                await session.execute(statement)
            await session.rollback()
    async with api.runtime.sessions() as session:  # the ORM refuses any change, as before
        review = await session.get(Review, review_id)
        assert review is not None
        review.messages = None
        with pytest.raises(ReviewIsAppendOnly):
            await session.flush()


async def test_workers_remove_done_jobs_past_retention_and_nothing_else(
    start_api: StartApi, configured_settings: Settings
) -> None:
    settings = configured_settings.model_copy(update={"job_retention_days": 2.0})
    async with start_api(settings) as api:
        await screened(api, 4)
        async with api.runtime.sessions() as session:
            ids = list((await session.execute(select(Job.id).order_by(Job.id))).scalars())
            old = datetime.now(UTC) - timedelta(days=3)
            # Two done jobs past retention, a dead one as old (kept: never claimed again, it
            # says why its screening failed), one done job within retention.
            await session.execute(update(Job).where(Job.id.in_(ids[:2])).values(updated_at=old))
            dead = {"status": JobStatus.DEAD, "updated_at": old}
            await session.execute(update(Job).where(Job.id == ids[2]).values(dead))
            await session.commit()
    # A worker removes them when it starts, then every few minutes.
    async with start_api(settings) as api:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            async with api.runtime.sessions() as session:
                left = set((await session.execute(select(Job.id))).scalars())
            if not left & set(ids[:2]):
                break
            await asyncio.sleep(0.05)  # a poll interval, not a wait for the work
        assert left == set(ids[2:])
        body = (await api.client.get("/metrics")).text
        async with api.runtime.sessions() as session:
            count = select(func.count()).select_from(Job).where(Job.status == JobStatus.DONE)
            done = (await session.execute(count)).scalar_one()
        assert f'faithscreen_jobs{{status="done"}} {done}' in body


async def test_a_failing_maintenance_pass_is_logged_and_tried_again() -> None:
    # Neither a database error nor any other may end the loop (or, through it, a shutdown).
    from sqlalchemy.exc import OperationalError

    from app.worker.maintenance import maintain

    stop = asyncio.Event()
    calls: list[int] = []

    def sessions() -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("not the database")
        stop.set()
        raise OperationalError("SELECT 1", None, Exception("the database is away"))

    await asyncio.wait_for(
        maintain(sessions, stop, job_retention_days=0, interval_seconds=0),  # type: ignore[arg-type]
        timeout=30,
    )
    assert len(calls) == 2
