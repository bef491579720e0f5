"""What a running process holds: the database engine, the LLM clients, and maybe a worker.

Shared by `faithscreen serve` (API with or without the embedded worker) and
`faithscreen worker` (a worker alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.db.engine import create_engine, make_session_factory
from app.llm.client import LLMClient
from app.pipeline.screening import ScreeningPipeline
from app.settings import Settings
from app.vocabulary import Role
from app.worker.failures import FailurePolicy
from app.worker.runner import Worker

log = logging.getLogger("faithscreen.runtime")


def build_clients(settings: Settings) -> dict[Role, LLMClient]:
    """One pooled client per configured role; an unconfigured role has none."""
    return {
        role: LLMClient(settings.provider(role), concurrency=settings.llm_concurrency)
        for role in Role
        if not settings.provider(role).missing(role)
    }


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    clients: dict[Role, LLMClient]
    worker: Worker | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _worker_task: asyncio.Task[None] | None = None

    @classmethod
    def create(cls, settings: Settings, *, with_worker: bool) -> Runtime:
        engine = create_engine(settings.database_url)
        sessions = make_session_factory(engine)
        clients = build_clients(settings)
        runtime = cls(settings, engine, sessions, clients)
        if with_worker:
            pipeline = ScreeningPipeline(sessions, clients, settings)
            runtime.worker = Worker(
                sessions,
                pipeline,
                lease_seconds=settings.job_lease_seconds,
                capacity=settings.worker_capacity or 2 * settings.llm_concurrency,
                failures=FailurePolicy(sessions),
            )
        return runtime

    def start(self) -> None:
        if self.worker is not None:
            self._worker_task = asyncio.create_task(
                self.worker.run(self._stop, grace_seconds=self.settings.shutdown_grace_seconds)
            )

    def notify_worker(self) -> None:
        if self.worker is not None:
            self.worker.notify()

    async def wait(self) -> None:
        """Until the worker stops (for `faithscreen worker`)."""
        if self._worker_task is not None:
            await self._worker_task

    def request_stop(self) -> None:
        self._stop.set()

    async def stop(self) -> None:
        self._stop.set()
        if self._worker_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker_task
        for client in self.clients.values():
            await client.aclose()
        await self.engine.dispose()
