"""Liveness and readiness: open to every caller, no key needed."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from app.api.deps import RuntimeDep
from app.api.schemas import Readiness
from app.db.engine import ping

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is alive."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Not ready: see `problems`."}},
)
async def readyz(runtime: RuntimeDep) -> JSONResponse:
    """Ready when the database answers and both providers are configured; says what is missing."""
    problems: list[str] = []
    try:
        await ping(runtime.engine)
    except SQLAlchemyError as error:
        problems.append(f"database unreachable: {type(error).__name__}")
    missing = runtime.settings.missing_providers()
    if missing:
        problems.append("providers not configured: set " + ", ".join(missing))
    body: dict[str, Any] = {
        "status": "ready" if not problems else "not_ready",
        "problems": problems,
    }
    return JSONResponse(body, status_code=200 if not problems else 503)
