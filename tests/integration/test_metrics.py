"""GET /metrics on SQLite and PostgreSQL: known stored data (supplied replies through the
API, provider-like reviews through the repository), every reported number checked, and
the admin key it needs when auth is on."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from app.models import Job
from app.models.api_key import AccessRole
from app.repositories import reviews
from app.repositories.reviews import ReviewRecord
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi, assert_error_shape
from tests.support.review_queue import bearer, make_key, pair, submit

_SAMPLE = re.compile(r"^([a-z_]+)(?:\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-z_]+)="((?:[^"\\]|\\.)*)"')
Series = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
async def metrics_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    # No audit sampling: which screenings reach the review queue is then known.
    settings = configured_settings.model_copy(update={"audit_rate": 0.0})
    async with start_api(settings, with_worker=False) as api:
        yield api


def parse(body: str) -> Series:
    series: Series = {}
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        match = _SAMPLE.match(line)
        assert match, line
        name, labels, value = match.groups()
        series[(name, frozenset(_LABEL.findall(labels or "")))] = float(value)
    return series


def of(series: Series, name: str) -> dict[frozenset[tuple[str, str]], float]:
    return {labels: value for (n, labels), value in series.items() if n == name}


def labels(**values: str) -> frozenset[tuple[str, str]]:
    return frozenset(values.items())


async def scrape(api: Api, headers: dict[str, str] | None = None) -> Series:
    response = await api.client.get("/metrics", headers=headers or {})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    return parse(response.text)


def provider_review(screening_id: str, role: str, attempt: int, latency_ms: int) -> ReviewRecord:
    usage = {"prompt_tokens": 100 * attempt, "completion_tokens": 10, "reasoning_tokens": 3}
    return ReviewRecord(
        screening_id=screening_id,
        role=role,
        attempt=attempt,
        purpose="review",
        verdict="faithful",
        parse_status="ok",
        parser_version="test",
        model=f"{role}-model",
        usage=usage | ({"total_tokens": 1} if role == "judge" else {}),
        latency_ms=latency_ms,
    )


async def seed(api: Api) -> list[str]:
    """2 passed, 1 flagged, 1 needs_review (supplied), 1 queued; 3 provider reviews."""
    ids = [await submit(api, None, n, o) for n, o in enumerate(["passed", "passed", "flagged"])]
    ids.append(await submit(api, None, 3, "needs_review"))
    queued = pair(4, "passed")
    del queued["replies"]
    assert (await api.client.post("/v1/screenings", json=queued)).status_code == 202
    async with api.runtime.sessions() as session:
        await reviews.add(session, provider_review(ids[0], "translator", 2, 400))
        await reviews.add(session, provider_review(ids[0], "translator", 3, 1500))
        await reviews.add(session, provider_review(ids[1], "judge", 2, 700_000))
        await session.commit()
    return ids


async def test_screenings_calls_jobs_and_queue_are_counted_exactly(metrics_api: Api) -> None:
    await seed(metrics_api)
    series = await scrape(metrics_api)
    assert of(series, "faithscreen_screenings") == {
        labels(outcome="passed", status="done"): 2,
        labels(outcome="flagged", status="done"): 1,
        labels(outcome="needs_review", status="done"): 1,
        labels(outcome="none", status="queued"): 1,
    }
    assert of(series, "faithscreen_llm_calls") == {
        labels(role="translator", model="supplied", parse_status="ok"): 3,
        labels(role="translator", model="supplied", parse_status="missing"): 1,
        labels(role="judge", model="supplied", parse_status="ok"): 4,
        labels(role="translator", model="translator-model", parse_status="ok"): 2,
        labels(role="judge", model="judge-model", parse_status="ok"): 1,
    }
    assert of(series, "faithscreen_jobs") == {labels(status="queued"): 1}
    assert of(series, "faithscreen_review_queue_items") == {labels(status="open"): 1}


async def test_tokens_are_summed_by_role_and_kind(metrics_api: Api) -> None:
    await seed(metrics_api)
    assert of(await scrape(metrics_api), "faithscreen_llm_tokens") == {
        labels(role="translator", kind="prompt"): 500,
        labels(role="translator", kind="completion"): 20,
        labels(role="translator", kind="reasoning"): 6,
        labels(role="judge", kind="prompt"): 200,
        labels(role="judge", kind="completion"): 10,
        labels(role="judge", kind="reasoning"): 3,
    }


async def test_latency_histogram_buckets_are_cumulative_with_sum_and_count(
    metrics_api: Api,
) -> None:
    await seed(metrics_api)
    series = await scrape(metrics_api)
    buckets = of(series, "faithscreen_llm_call_latency_seconds_bucket")
    translator = {dict(k)["le"]: v for k, v in buckets.items() if dict(k)["role"] == "translator"}
    judge = {dict(k)["le"]: v for k, v in buckets.items() if dict(k)["role"] == "judge"}
    assert (translator["0.25"], translator["0.5"], translator["1.0"], translator["2.5"]) == (
        0,
        1,
        1,
        2,
    )
    assert translator["+Inf"] == 2 and translator["600.0"] == 2
    assert judge["300.0"] == 0 and judge["600.0"] == 0 and judge["+Inf"] == 1
    assert of(series, "faithscreen_llm_call_latency_seconds_sum") == {
        labels(role="translator"): 1.9,
        labels(role="judge"): 700.0,
    }
    assert of(series, "faithscreen_llm_call_latency_seconds_count") == {
        labels(role="translator"): 2,
        labels(role="judge"): 1,
    }


async def test_oldest_queued_job_age_is_how_long_it_has_been_due(metrics_api: Api) -> None:
    assert of(await scrape(metrics_api), "faithscreen_oldest_queued_job_age_seconds") == {
        frozenset(): 0
    }
    await seed(metrics_api)
    due = datetime.now(UTC) - timedelta(hours=1)
    async with metrics_api.runtime.sessions() as session:
        await session.execute(update(Job).values(run_after=due))
        await session.commit()
    before = (datetime.now(UTC) - due).total_seconds()
    age = of(await scrape(metrics_api), "faithscreen_oldest_queued_job_age_seconds")[frozenset()]
    after = (datetime.now(UTC) - due).total_seconds()
    assert before <= age <= after


async def test_metrics_need_an_admin_key_when_auth_is_on(
    start_api: StartApi, unconfigured_settings: Settings
) -> None:
    settings = unconfigured_settings.model_copy(update={"auth": "on"})
    async with start_api(settings, with_worker=False) as api:
        response = await api.client.get("/metrics")
        assert response.status_code == 401
        assert assert_error_shape(response.json())["code"] == "unauthorized"
        reviewer = await make_key(api, AccessRole.REVIEWER, "reviewer")
        assert (await api.client.get("/metrics", headers=bearer(reviewer))).status_code == 403
        admin = await make_key(api, AccessRole.ADMIN, "admin")
        assert of(await scrape(api, bearer(admin)), "faithscreen_jobs") == {}
