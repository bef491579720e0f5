"""Following a batch: progress counts, dead jobs, and its results streamed in submission
order once the embedded worker has screened the queued items with a scripted provider."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.api.routes import batches as batch_routes
from app.models import Job
from app.repositories import jobs
from tests.support.batches import (
    RESULT_FIELDS,
    TRANSLATOR_MISMATCH,
    get_json,
    no_api_keys,  # noqa: F401 (autouse)
    post_batch,
    queued_item,
    results,
    supplied_item,
    wait_batch_done,
)
from tests.support.in_process_api import Api
from tests.support.scripted_openai import Reply, ScriptedOpenAI

NO_VERDICT = "BACK-TRANSLATION: something\nISSUES: none\n"


async def test_results_stream_in_submission_order_after_the_worker_finishes(
    api: Api, scripted_openai: ScriptedOpenAI
) -> None:
    # Queued items among supplied ones; the provider flags one and first answers another
    # without a verdict (a format retry follows).
    scripted_openai.script("add_comm_7 ", steps=[Reply(TRANSLATOR_MISMATCH)] * 2)
    scripted_openai.script(
        "add_comm_11 ", model="translator-model", steps=[Reply(NO_VERDICT), Reply()]
    )
    queued = {3, 7, 11, 12}
    items = [queued_item(n) if n in queued else supplied_item(n) for n in range(15)]
    items[5] = supplied_item(5, translator=TRANSLATOR_MISMATCH)
    accepted = await post_batch(api, items)
    progress = await wait_batch_done(api, accepted["id"])

    lines = await results(api, accepted["id"])
    assert all(set(line) == RESULT_FIELDS for line in lines)
    assert [line["index"] for line in lines] == list(range(15))
    assert [line["external_id"] for line in lines] == [f"item-{n}" for n in range(15)]
    assert all(line["status"] == "done" for line in lines)
    outcome = {line["index"]: (line["outcome"], tuple(line["reasons"])) for line in lines}
    assert outcome[5] == ("flagged", ("translator_mismatch",))
    assert outcome[7][0] == "flagged" and "translator_mismatch" in outcome[7][1]
    assert {outcome[n] for n in range(15) if n not in (5, 7)} == {("passed", ())}

    assert (progress["total"], progress["done"], progress["dead"]) == (15, 15, 0)
    assert progress["outcomes"] == {"passed": 13, "flagged": 2, "needs_review": 0}
    translator, judge = (
        progress["parse_statuses"]["translator"],
        progress["parse_statuses"]["judge"],
    )
    assert (translator["ok"], translator["missing"], judge["ok"]) == (15, 1, 15)
    assert sum(translator.values()) == 16 and sum(judge.values()) == 15


async def test_status_is_queued_running_then_done_as_items_finish(idle_api: Api) -> None:
    waiting = await post_batch(idle_api, [queued_item(0), queued_item(1)])
    assert waiting["status"] == "queued"
    mixed = await post_batch(idle_api, [supplied_item(2), queued_item(3)])
    assert mixed["status"] == "running"
    decided = await post_batch(idle_api, [supplied_item(4), supplied_item(5)])
    assert decided["status"] == "done"
    progress = await get_json(idle_api, f"/v1/batches/{mixed['id']}")
    assert (progress["total"], progress["done"], progress["status"]) == (2, 1, "running")
    assert progress["outcomes"] == {"passed": 1, "flagged": 0, "needs_review": 0}
    assert progress["parse_statuses"]["translator"]["ok"] == 1
    assert set(progress["parse_statuses"]["judge"]) >= {"ok", "missing", "provider_error"}


async def test_dead_jobs_are_counted_on_their_batch(idle_api: Api) -> None:
    batch = await post_batch(idle_api, [queued_item(0), queued_item(1), supplied_item(2)])
    other = await post_batch(idle_api, [queued_item(3)])
    async with idle_api.runtime.sessions() as session:
        for claimed in await jobs.claim(session, owner="test", lease_seconds=60, limit=10):
            await jobs.fail(session, claimed.id, "test", error="boom", retry_at=None)
        await session.commit()
        dead = (await session.execute(select(Job.status))).scalars().all()
    assert list(dead) == ["dead"] * 3
    assert (await get_json(idle_api, f"/v1/batches/{batch['id']}"))["dead"] == 2
    assert (await get_json(idle_api, f"/v1/batches/{other['id']}"))["dead"] == 1


async def test_results_pages_join_up_without_gaps_or_repeats(
    idle_api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch_routes, "RESULTS_PAGE", 3)
    for size in (9, 10):  # a last page that is full, and one that is not
        accepted = await post_batch(idle_api, [supplied_item(n) for n in range(size)])
        lines = await results(idle_api, accepted["id"])
        assert [line["index"] for line in lines] == list(range(size))


async def test_results_of_a_batch_leave_out_other_batches(idle_api: Api) -> None:
    first = await post_batch(idle_api, [supplied_item(0), supplied_item(1)])
    await post_batch(idle_api, [supplied_item(0), supplied_item(2)])
    lines = await results(idle_api, first["id"])
    assert [line["external_id"] for line in lines] == ["item-0", "item-1"]
