"""Liveness and readiness: open to every caller, no key needed."""

from __future__ import annotations

import functools
from typing import Any, Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError

from app.api.deps import RuntimeDep
from app.api.schemas import Readiness
from app.db.migrate import head_revision, revision_of
from app.runtime import Runtime
from app.settings import Settings
from app.vocabulary import Role

router = APIRouter(tags=["health"])

# The migrations shipped with this code do not change while it runs.
_head_revision = functools.cache(head_revision)


# With FAITHSCREEN_AUTH=off, serve's loopback-only guard (app/api/loopback_only.py)
# answers every path, these too, before any route does.
LOOPBACK_ONLY: dict[int | str, dict[str, Any]] = {
    403: {
        "description": "Only with FAITHSCREEN_AUTH=off: the request's Host or Origin is not "
        "this machine (`host_not_loopback`, `origin_not_loopback`)."
    }
}


@router.get("/healthz", responses=LOOPBACK_ONLY)
async def healthz() -> dict[str, str]:
    """The process is alive."""
    return {"status": "ok"}


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={
        503: {"model": Readiness, "description": "Not ready: see `problems`."},
        **LOOPBACK_ONLY,
    },
)
async def readyz(runtime: RuntimeDep) -> JSONResponse:
    """Ready when the database answers and its schema is at head. Says which providers
    are configured and whether this process runs a worker; neither decides readiness."""
    problems = await _database_problems(runtime)
    body = Readiness(
        status="not_ready" if problems else "ready",
        problems=problems,
        providers=_providers(runtime.settings),
        worker="running" if runtime.worker_running else "none",
    )
    return JSONResponse(body.model_dump(), status_code=503 if problems else 200)


def _providers(settings: Settings) -> dict[str, Literal["configured", "missing"]]:
    """Per role; with a judge panel, `judge` is configured (each judge is, or the
    settings were refused) and each judge is listed as `judge:<name>`."""
    found: dict[str, Literal["configured", "missing"]] = {
        role.value: "missing" if role.value in _missing_roles(settings) else "configured"
        for role in Role
    }
    found |= {f"judge:{name}": "configured" for name in settings.panel}
    return found


def _missing_roles(settings: Settings) -> set[str]:
    if settings.panel:
        return {Role.TRANSLATOR.value} if settings.translator.missing(Role.TRANSLATOR) else set()
    return {role.value for role in Role if settings.provider(role).missing(role)}


async def _database_problems(runtime: Runtime) -> list[str]:
    try:
        revision = await revision_of(runtime.engine)
    except SQLAlchemyError as error:
        return [f"database unreachable: {type(error).__name__}"]
    head = _head_revision()
    if revision != head:
        return [
            f"database schema at revision {revision}, not at head {head}: "
            "run `faithscreen db upgrade`"
        ]
    return []
