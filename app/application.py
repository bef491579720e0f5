"""The FastAPI application and its lifespan (database, LLM clients, embedded worker).

The composition root: it puts the API (app/api), the review pages (app/web) and /mcp
(app/mcp) on one app. It sits outside every package because those import app/api; only
the commands that serve (app/cli) and the tests import it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp

from app import __version__
from app.api.body_cap import CappedBodies, request_cap
from app.api.errors import install_error_handlers
from app.api.loopback_only import LoopbackOnly
from app.api.openapi import document_contract
from app.api.request_body import document_bodies
from app.api.routes import (
    batches,
    calibration,
    health,
    keys,
    metrics,
    queue,
    queue_threads,
    reports,
    rescore,
    review_stats,
    screenings,
)
from app.mcp.http import install_mcp
from app.runtime import Runtime
from app.settings import Settings, get_settings
from app.web.admin_pages import install_admin_pages
from app.web.routes import install_review_pages


def create_app(settings: Settings | None = None, *, with_worker: bool = True) -> FastAPI:
    chosen = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = Runtime.create(chosen, with_worker=with_worker)
        app.state.runtime = runtime
        runtime.start()
        try:
            async with mcp_running():
                yield
        finally:
            await runtime.stop()

    app = FastAPI(
        title="FaithScreen",
        version=__version__,
        description="Screens informal/Lean 4 statement pairs for faithfulness.",
        lifespan=lifespan,
    )
    install_error_handlers(app)
    app.include_router(health.router)
    app.include_router(screenings.router)
    app.include_router(batches.router)
    app.include_router(queue.router)
    app.include_router(queue_threads.router)  # comments and assignment of a queue item
    app.include_router(keys.router)
    app.include_router(metrics.router)  # /metrics, for a Prometheus scraper
    app.include_router(reports.router)  # /v1/reports/summary
    app.include_router(rescore.router)  # /v1/rescore
    app.include_router(calibration.router)
    app.include_router(review_stats.router)  # /v1/review/stats, per-person review work
    install_review_pages(app)  # the reviewer web page, /review (app/web)
    install_admin_pages(app)  # /review/batches and /review/keys, for admins (app/web)
    mcp_running = install_mcp(app)  # /mcp: the MCP tools over streamable HTTP (app/mcp)
    # Every body is counted as it is read; the handler reading it may name its own cap.
    app.add_middleware(CappedBodies, cap=request_cap(chosen.max_request_bytes))
    document_bodies(
        app,
        [
            screenings.BODY,
            keys.BODY,
            rescore.BODY,
            queue.DECISION_BODY,
            queue.ADJUDICATION_BODY,
            queue.REOPEN_BODY,
            queue_threads.COMMENT_BODY,
            queue_threads.ASSIGN_BODY,
        ],
    )
    document_contract(app)  # every operation's error statuses, read from its route
    return app


def create_served_app(settings: Settings, *, with_worker: bool = True) -> ASGIApp:
    """The app as `faithscreen serve` puts it on a socket. With FAITHSCREEN_AUTH=off every
    caller is an admin, so only requests addressed to this machine pass (DNS rebinding:
    app/api/loopback_only.py); callers in the process reach create_app's app directly."""
    app = create_app(settings, with_worker=with_worker)
    return LoopbackOnly(app) if settings.auth == "off" else app
