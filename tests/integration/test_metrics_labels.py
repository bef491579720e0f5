"""GET /metrics stays small whatever models a provider reports (on SQLite and PostgreSQL): a
model name is a label value, cut to MAX_LABEL_CHARS with a mark, and past MAX_DISTINCT
models the least used fold into "other" with their counts. Before, one reply naming a
2 MB model made every scrape 6 MB (the name in each family that carries the model)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from app.observability.labels import MAX_DISTINCT, MAX_LABEL_CHARS, OTHER
from app.repositories import reviews
from app.repositories.reviews import ReviewRecord
from app.settings import Settings
from tests.support.in_process_api import Api, StartApi
from tests.support.review_queue import submit

HUGE_MODEL = "m" * (2 << 20)
_MODEL = re.compile(r'^faithscreen_(?:judge_)?llm_calls\{.*model="((?:[^"\\]|\\.)*)".*\} (\S+)$')


@pytest.fixture
async def metrics_api(start_api: StartApi, configured_settings: Settings) -> AsyncIterator[Api]:
    settings = configured_settings.model_copy(update={"audit_rate": 0.0})
    async with start_api(settings, with_worker=False) as api:
        yield api


def judge_review(screening_id: str, attempt: int, model: str) -> ReviewRecord:
    return ReviewRecord(
        screening_id=screening_id,
        role="judge",
        attempt=attempt,
        purpose="review",
        verdict="faithful",
        parse_status="ok",
        parser_version="test",
        model=model,
    )


async def store(api: Api, models: list[str]) -> None:
    screening_id = await submit(api, None, 0, "passed")
    async with api.runtime.sessions() as session:
        for attempt, model in enumerate(models, start=2):  # attempt 1 is the supplied reply
            await reviews.add(session, judge_review(screening_id, attempt, model))
        await session.commit()


async def scrape(api: Api) -> str:
    response = await api.client.get("/metrics")
    assert response.status_code == 200, response.text
    return response.text


def model_counts(body: str) -> dict[str, float]:
    """Calls per model label in faithscreen_llm_calls (judge reviews only, here)."""
    counts: dict[str, float] = {}
    for line in body.splitlines():
        if line.startswith("faithscreen_llm_calls{") and 'role="judge"' in line:
            match = _MODEL.match(line)
            assert match, line[:300]
            counts[match[1]] = counts.get(match[1], 0) + float(match[2])
    return counts


async def test_a_2_mb_model_name_is_cut_to_a_short_label(metrics_api: Api) -> None:
    await store(metrics_api, [HUGE_MODEL])
    body = await scrape(metrics_api)
    assert len(body) < 64 * 1024
    cut = [model for model in model_counts(body) if model.startswith("mmm")]
    assert len(cut) == 1 and len(cut[0]) == MAX_LABEL_CHARS
    assert cut[0].endswith(f"\u2026[cut from {len(HUGE_MODEL)} chars]")


async def test_past_the_distinct_limit_the_least_used_models_fold_into_other(
    metrics_api: Api,
) -> None:
    # Model k is reported k times (k = 1..MAX_DISTINCT + 8): the 8 least used fold.
    many = [f"model-{k:03d}" for k in range(1, MAX_DISTINCT + 9) for _ in range(k)]
    await store(metrics_api, many)
    counts = model_counts(await scrape(metrics_api))
    kept = {f"model-{k:03d}" for k in range(9, MAX_DISTINCT + 9)}
    # Folded: models 1..8, and the judge's supplied reply (model "supplied").
    assert counts == {model: int(model[-3:]) for model in kept} | {OTHER: sum(range(1, 9)) + 1}
