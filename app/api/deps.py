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


class AfterCommit:
    """What a request asks to happen once its transaction has committed, and only then:
    a worker woken earlier could look for the new jobs before they are visible, find none
    and sleep until its next poll."""

    def __init__(self) -> None:
        self.wakes_worker = False

    def wake_worker(self) -> None:
        """The request queued work: wake the worker once it is committed."""
        self.wakes_worker = True


def new_after_commit() -> AfterCommit:
    return AfterCommit()


# FastAPI builds one per request (dependencies are cached within a request): the handler
# asking for it and the session dependency reading it share the same object.
AfterCommitDep = Annotated[AfterCommit, Depends(new_after_commit)]


async def get_session(
    runtime: RuntimeDep, after_commit: AfterCommitDep
) -> AsyncIterator[AsyncSession]:
    """Commit when the handler returns, roll back when it raises: nothing half-stored.
    After the commit, what the handler asked of `after_commit`."""
    async with runtime.sessions() as session:
        try:
            yield session
        except BaseException:
            await session.rollback()
            raise
        await session.commit()
        if after_commit.wakes_worker:
            runtime.notify_worker()


# scope="function": the commit runs when the handler returns, before the response starts.
# The default ("request") would commit after the response is sent: a client could read
# before the commit, and a failed commit would follow a 202 already on the wire.
SessionDep = Annotated[AsyncSession, Depends(get_session, scope="function")]
