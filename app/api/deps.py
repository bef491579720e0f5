"""Request dependencies. The session dependency is the one place a request commits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncSession

from app.runtime import Runtime
from app.settings import Settings


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


def get_settings_dep(runtime: RuntimeDep) -> Settings:
    return runtime.settings


SettingsDep = Annotated[Settings, Depends(get_settings_dep)]


async def get_session(runtime: RuntimeDep) -> AsyncIterator[AsyncSession]:
    """Commit when the handler returns, roll back when it raises: nothing half-stored."""
    async with runtime.sessions() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        await session.commit()
        if session.info.pop("work_queued", False):
            runtime.notify_worker()


# scope="function": the commit runs when the handler returns, before the response starts.
# The default ("request") would commit after the response is sent: a client could read
# before the commit, and a failed commit would follow a 202 already on the wire.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
