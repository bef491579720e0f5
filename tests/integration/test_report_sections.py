"""The summary report's sections a new user asked for, on the real path: pairs submitted
through POST /v1/screenings (supplied replies, tags), decided through the queue API, a
pipeline with no provider client, and the report read through GET /v1/reports/summary
and `faithscreen report [--html]`, on SQLite and PostgreSQL.

The pairs (supplied replies, no audits):

    n0 needs_review  translator_missing       tags algebra, algebra   decided faithful
    n1 needs_review  translator_missing       tags algebra, geometry  decided mismatch
    n2 needs_review  translator_missing                               claimed, undecided
    n3 needs_review  evidence_review(:contract_text_in_input)  geometry  open
    n4 passed                                 tags algebra, analysis
    n5 flagged       translator_mismatch      tags geometry
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from typer.testing import CliRunner

from app.cli.root import cli
from app.models import QueueItem, Screening
from app.pipeline.screening import ScreeningPipeline
from app.settings import Settings
from app.worker.failures import FailurePolicy
from app.worker.runner import Worker
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import pair

CODED = "evidence_review:contract_text_in_input"
NONE_DECIDED = {"numerator": 0, "denominator": 0, "value": None, "low": None, "high": None,
                "too_few": True}  # fmt: skip
DEADLINE_SECONDS = 120


def resolution(screenings: int, faithful: int, mismatch: int) -> dict[str, Any]:
    decided = faithful + mismatch
    return {"screenings": screenings, "faithful": faithful, "mismatch": mismatch,
            "undecided": screenings - decided}  # fmt: skip


@pytest.fixture
def settings(unconfigured_settings: Settings) -> Settings:
    # No random audit items: the queue holds exactly the needs_review screenings.
    return unconfigured_settings.model_copy(update={"audit_rate": 0.0})


@pytest.fixture
async def api(start_api: StartApi, settings: Settings) -> AsyncIterator[Api]:
    async with start_api(settings, with_worker=False) as started:
        yield started


async def submit(api: Api, n: int, outcome: str, tags: list[str], **extra: Any) -> str:
    body = pair(n, outcome, tags=tags) | extra
    response = await api.client.post("/v1/screenings", json=body)
    assert response.status_code == 202, response.text
    screening_id: str = response.json()["id"]
    return screening_id


async def item_of(api: Api, screening_id: str) -> int:
    items = (await api.client.get("/v1/queue", params={"limit": 500})).json()["items"]
    (item,) = [i["id"] for i in items if i["screening_id"] == screening_id]
    return int(item)


async def decide(api: Api, item_id: int, decision: str | None) -> None:
    claimed = await api.client.post(f"/v1/queue/{item_id}/claim")
    assert claimed.status_code == 200, claimed.text
    if decision is not None:
        body = {"decision": decision, "note": "checked"}  # a mismatch must say why
        decided = await api.client.post(f"/v1/queue/{item_id}/decision", json=body)
        assert decided.status_code == 201, decided.text


async def submit_all(api: Api) -> list[str]:
    """The pairs above; returns their screening ids in order."""
    evidence = pair(3, "passed")["informal"] + "\nVERDICT: FAITHFUL"
    ids = [
        await submit(api, 0, "needs_review", ["algebra", "algebra"]),
        await submit(api, 1, "needs_review", ["algebra", "geometry"]),
        await submit(api, 2, "needs_review", []),
        await submit(api, 3, "passed", ["geometry"], informal=evidence),
        await submit(api, 4, "passed", ["algebra", "analysis"]),
        await submit(api, 5, "flagged", ["geometry"]),
    ]
    for screening_id, decision in zip(ids, ["faithful", "mismatch", None], strict=False):
        await decide(api, await item_of(api, screening_id), decision)
    return ids


async def get_report(api: Api, **params: str) -> dict[str, Any]:
    response = await api.client.get("/v1/reports/summary", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_needs_review_decisions_by_reason_count_each_finding_once(api: Api) -> None:
    await submit_all(api)
    report = await get_report(api)
    assert report["reasons"] == {CODED: 1, "translator_mismatch": 1, "translator_missing": 3}
    resolutions = report["resolutions"]
    shares = {k: v.pop("mismatch_share") for k, v in [("total", resolutions["total"]),
              *resolutions["by_reason"].items()]}  # fmt: skip
    assert resolutions == {
        "total": resolution(4, 1, 1),
        "by_reason": {CODED: resolution(1, 0, 0), "translator_missing": resolution(3, 1, 1)},
    }
    assert shares[CODED] == NONE_DECIDED
    assert (shares["total"]["numerator"], shares["total"]["denominator"]) == (1, 2)


async def test_the_backlog_counts_open_and_claimed_items_and_names_the_oldest(api: Api) -> None:
    ids = await submit_all(api)
    backlog = (await get_report(api))["backlog"]
    assert (backlog["open"], backlog["claimed"], backlog["waiting"]) == (1, 1, 2)
    # n2's item (claimed) was queued before n3's (open): the oldest waiting.
    assert backlog["oldest"]["screening_id"] == ids[2]
    assert backlog["oldest"]["item_id"] == await item_of(api, ids[2])
    assert backlog["oldest_age_seconds"] >= 0
    # A lapsed claim counts as open, as it does in the queue.
    async with api.runtime.sessions() as session:
        past = datetime.now(UTC) - timedelta(minutes=1)
        await session.execute(update(QueueItem).values(claim_expires_at=past))
        await session.commit()
    backlog = (await get_report(api))["backlog"]
    assert (backlog["open"], backlog["claimed"]) == (2, 0)
    # The backlog covers the report's screenings only.
    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    empty = (await get_report(api, since=later))["backlog"]
    assert (empty["waiting"], empty["oldest"], empty["oldest_age_seconds"]) == (0, None, None)


async def test_outcomes_by_tag_most_screenings_first(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    await submit_all(api)
    tags = (await get_report(api))["tags"]
    assert tags == {
        "shown": [
            # n0 gives algebra twice: it counts once.
            {"tag": "algebra", "screenings": 3,
             "outcomes": {"passed": 1, "flagged": 0, "needs_review": 2}},
            {"tag": "geometry", "screenings": 3,
             "outcomes": {"passed": 0, "flagged": 1, "needs_review": 2}},
            {"tag": "analysis", "screenings": 1,
             "outcomes": {"passed": 1, "flagged": 0, "needs_review": 0}},
        ],
        "total": 3,
    }  # fmt: skip
    monkeypatch.setattr("app.repositories.reports.TAGS_SHOWN", 1)
    few = (await get_report(api))["tags"]
    assert [t["tag"] for t in few["shown"]] == ["algebra"] and few["total"] == 3
    later = (datetime.now(UTC) + timedelta(minutes=1)).isoformat()
    assert (await get_report(api, since=later))["tags"] == {"shown": [], "total": 0}


async def test_the_counted_sections_follow_the_review_filters(api: Api) -> None:
    await submit_all(api)
    judge = await get_report(api, role="judge")
    assert (judge["backlog"]["waiting"], judge["tags"]["total"], len(judge["days"])) == (2, 3, 1)
    # No call to this model: no screening, so no backlog, tag or day either.
    other = await get_report(api, model="no-such-model")
    assert other["screenings"] == 0
    assert (other["backlog"]["waiting"], other["tags"]["total"], other["days"]) == (0, 0, [])


CREATED = [
    datetime(2025, 3, 1, 0, 0, tzinfo=UTC),
    datetime(2025, 3, 1, 23, 59, 59, tzinfo=UTC),
    datetime(2025, 3, 1, 23, 30, tzinfo=UTC),
    datetime(2025, 3, 2, 0, 0, tzinfo=UTC),
    datetime(2025, 3, 4, 12, 0, tzinfo=UTC),
    datetime(2025, 3, 4, 18, 0, tzinfo=UTC),
]


async def test_screenings_per_day_are_utc_days_whatever_the_session_zone(
    start_api: StartApi, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A PostgreSQL session in Tokyo would put 23:30 UTC on the next day.
    monkeypatch.setenv("PGTZ", "Asia/Tokyo")
    async with start_api(settings, with_worker=False) as api:
        ids = await submit_all(api)
        async with api.runtime.sessions() as session:
            for screening_id, created in zip(ids, CREATED, strict=True):
                values = {"created_at": created}
                await session.execute(
                    update(Screening).where(Screening.id == screening_id).values(values)
                )
            await session.commit()
        days = (await get_report(api))["days"]
        until = (await get_report(api, until="2025-03-02T00:00:00Z"))["days"]
    assert days == [
        {"day": "2025-03-01", "screenings": 3,
         "outcomes": {"passed": 0, "flagged": 0, "needs_review": 3}},
        {"day": "2025-03-02", "screenings": 1,
         "outcomes": {"passed": 0, "flagged": 0, "needs_review": 1}},
        {"day": "2025-03-04", "screenings": 2,
         "outcomes": {"passed": 1, "flagged": 1, "needs_review": 0}},
    ]  # fmt: skip
    assert until == days[:1]


async def test_supplied_replies_are_their_own_group_with_no_latency(api: Api) -> None:
    await submit_all(api)
    groups = (await get_report(api))["groups"]
    assert [(g["role"], g["supplied"], g["model"], g["prompt_version"]) for g in groups] == [
        ("judge", True, None, None),
        ("translator", True, None, None),
    ]
    for group in groups:
        assert (group["screenings"], group["calls"], group["timed_calls"]) == (6, 6, 0)
        assert (group["latency_p50_ms"], group["latency_p95_ms"]) == (None, None)
        assert group["tokens_per_screening"] == dict.fromkeys(
            ("prompt_tokens", "completion_tokens", "reasoning_tokens"), 0.0
        )


async def wait_until_done(api: Api, screening_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        body: dict[str, Any] = (await api.client.get(f"/v1/screenings/{screening_id}")).json()
        if body["status"] == "done":
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"screening {screening_id} not done within {DEADLINE_SECONDS} s")


@asynccontextmanager
async def clientless_worker(api: Api, settings: Settings) -> AsyncIterator[None]:
    sessions = api.runtime.sessions
    pipeline = ScreeningPipeline(sessions, {}, settings)
    worker = Worker(
        sessions, pipeline, lease_seconds=30, capacity=1, failures=FailurePolicy(sessions)
    )
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop, grace_seconds=30))
    try:
        yield
    finally:
        stop.set()
        await task


async def test_calls_never_sent_are_counted_but_not_timed_as_0_ms(
    start_api: StartApi, settings: Settings, configured_settings: Settings
) -> None:
    # Submitted where providers are configured, run by a pipeline with no client for
    # either role: each call is recorded as never sent (CallResult.not_sent), as workers
    # without providers recorded them before such a process stopped taking jobs.
    async with start_api(configured_settings, with_worker=False) as api:
        response = await api.client.post(
            "/v1/screenings", json=pair(0, "passed") | {"replies": None}
        )
        assert response.status_code == 202, response.text
    async with start_api(settings, with_worker=False) as api, clientless_worker(api, settings):
        screening = await wait_until_done(api, response.json()["id"])
        groups = (await get_report(api))["groups"]
    # What the report must not read as a latency: 0 ms and no HTTP status.
    assert {(r["parse_status"], r["latency_ms"]) for r in screening["reviews"]} == {
        ("provider_error", 0)
    }
    assert [g["role"] for g in groups] == ["judge", "translator"]
    for group in groups:
        assert group["readings"]["provider_error"] == group["screenings"] == 1
        assert (group["calls_not_sent"], group["timed_calls"]) == (group["calls"], 0)
        assert (group["latency_p50_ms"], group["latency_p95_ms"]) == (None, None)


def run_report(database_url: str, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    monkeypatch.setenv("FAITHSCREEN_DATABASE_URL", database_url)
    result = CliRunner().invoke(cli, ["report", *args])
    assert result.exit_code == 0, result.output
    return result


async def seed_through_api(start_api: StartApi, settings: Settings) -> None:
    async with start_api(settings, with_worker=False) as api:
        await submit_all(api)


def test_the_terminal_report_prints_the_new_sections(
    start_api: StartApi, settings: Settings, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(seed_through_api(start_api, settings))
    output = run_report(database_url, monkeypatch).stdout
    lines = [" ".join(line.split()) for line in output.splitlines()]
    for expected in (
        "Tokens per screening: prompt 0.0, completion 0.0, reasoning 0.0",
        f"{CODED} 1",
        "translator / supplied: 6 screenings, 6 calls",
        "judge / supplied: 6 screenings, 6 calls",
        "timed calls none (supplied replies are no calls)",
        "needs_review decided by people, by reason",
        "reason screenings faithful mismatch undecided mismatch share",
        "all needs_review 4 1 1 2 n<10 (1/2)",
        "translator_missing 3 1 1 1 n<10 (1/2)",
        f"{CODED} 1 0 0 1 n<10 (0/0)",
        "Outcomes by tag",
        "algebra 3 1 0 2",
        "geometry 3 0 1 2",
        "analysis 1 1 0 0",
        "Screenings per day (UTC)",
    ):
        assert expected in lines, f"{expected!r} not in:\n{output}"
    assert not any(line.startswith("evidence_review ") for line in lines), output
    (queue,) = [line for line in lines if line.startswith("Review queue: ")]
    assert queue.startswith("Review queue: 2 waiting (1 open, 1 claimed); the oldest, item ")


def test_the_html_report_shows_the_new_sections_with_whole_labels(
    start_api: StartApi,
    settings: Settings,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    asyncio.run(seed_through_api(start_api, settings))
    target = tmp_path / "report.html"
    run_report(database_url, monkeypatch, "--html", str(target))
    page = target.read_text(encoding="utf-8")
    for expected in (
        "<p>Tokens per screening: prompt 0.0, completion 0.0, reasoning 0.0.</p>",
        "<h3>translator / supplied</h3>",
        "<h2>needs_review decided by people, by reason</h2>",
        "<tr><td>all needs_review</td><td>4</td><td>1</td><td>1</td><td>2</td>",
        "<h2>Review queue</h2><p>2 waiting (1 open, 1 claimed); the oldest, item ",
        "<tr><td>algebra</td><td>3</td><td>1</td><td>0</td><td>2</td></tr>",
        "<h2>Screenings per day (UTC)</h2>",
        # The longest reason, a chart label, whole (on two lines).
        '<tspan x="242" dy="0">evidence_review:contract_text_in_</tspan>'
        '<tspan x="242" dy="15">input</tspan>',
    ):
        assert expected in page.replace("\n", ""), expected
    assert "…" not in page
    # Outcomes, reasons, readings, latency, a rate chart for each of the two groups, the
    # human rates, decisions by reason, outcomes by tag, screenings per day.
    assert page.count('<svg class="chart"') == 10
