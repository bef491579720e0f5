"""GET /metrics: Prometheus text format: totals kept in the database (the same from every
replica), then this process's own counters (app/process_metrics.py).

A `metrics` key (or an admin's) required: a scraper needs no key that can do more
(FAITHSCREEN_AUTH=off opens it, as every endpoint)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from app.api.auth import metrics_access
from app.api.deps import SessionDep
from app.api.schemas import GUARDED_RESPONSES
from app.observability.exposition import CONTENT_TYPE, render
from app.observability.families import families
from app.observability.process_families import process_families
from app.repositories import metrics

router = APIRouter(tags=["operations"], dependencies=[metrics_access], responses=GUARDED_RESPONSES)


@router.get("/metrics", response_class=PlainTextResponse)
async def prometheus_metrics(session: SessionDep) -> PlainTextResponse:
    """Screenings, LLM calls, latency, tokens, jobs and the review queue, for Prometheus."""
    body = render([*families(await metrics.snapshot(session)), *process_families()])
    return PlainTextResponse(body, media_type=CONTENT_TYPE)
