"""What a running process holds: the database engine, the LLM clients, and maybe a worker.

Shared by `faithscreen serve` (API with or without the embedded worker) and
`faithscreen worker` (a worker alone).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
from dataclasses import dataclass, field

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from app.budgets.service import Budgets
from app.db.engine import create_engine, make_session_factory
from app.db.location import database_location
from app.lean import LeanClient
from app.llm.client import LLMClient
from app.llm.gate import OPEN_GATE
from app.pipeline.lean_step import LeanStep
from app.pipeline.screening import ScreeningPipeline
from app.settings import ProviderSettings, Settings
from app.vocabulary import Role
from app.worker.failures import FailurePolicy
from app.worker.maintenance import maintain
from app.worker.owners import new_owner_name
from app.worker.runner import Worker
from faithscreen_client.credentials import mask_url_credentials

log = logging.getLogger("faithscreen.runtime")


NO_PROVIDERS_NO_WORKER = (
    "no worker runs in this process: it takes no screening job, each of which needs a "
    "provider for both roles; set %s to let it screen (queued jobs wait for a worker "
    "that has them; supplied replies are still decided at intake, unless a Lean server "
    "must check them first)"
)

# A young generation this large is collected ~30 times less often than the default 700;
# the worker allocates (and frees, by reference count) many short-lived objects per call.
GC_THRESHOLDS = (20_000, 20, 100)


@functools.cache
def tune_garbage_collection() -> None:
    """Once per process, after start-up: move everything alive now (modules, the ORM's
    metadata, compiled statements) out of the collector's sight, and collect the young
    generation less often. The cyclic collector took 0.9-1.7 ms of CPU per screened pair
    in the batch benchmark before, about 0.05 after; reference counting still frees
    everything that is not in a cycle at once."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def build_clients(settings: Settings, budgets: Budgets | None = None) -> dict[Role, LLMClient]:
    """One pooled client per configured role; an unconfigured role has none. With a panel
    the single judge's settings are ignored: no client for it. Each client's calls are
    admitted by its provider's shared budget (app/budgets), given `budgets`."""
    roles = [Role.TRANSLATOR] if settings.panel else list(Role)
    return {
        role: _client(settings, settings.provider(role), role, budgets)
        for role in roles
        if not settings.provider(role).missing(role)
    }


def build_judge_clients(settings: Settings, budgets: Budgets | None = None) -> dict[str, LLMClient]:
    """A panel's judges, each on a pooled client (and concurrency) of its own."""
    return {
        name: _client(settings, settings.judge_provider(name), Role.JUDGE, budgets)
        for name in settings.panel
    }


def _client(
    settings: Settings, provider: ProviderSettings, role: Role, budgets: Budgets | None
) -> LLMClient:
    gate = OPEN_GATE if budgets is None else budgets.gate(provider)
    return LLMClient(provider, concurrency=settings.llm_concurrency, role=role, gate=gate)


def _log_configuration(settings: Settings) -> None:
    """Where this process stores and calls, credentials masked: what an operator checks first."""
    log.info("database: %s", database_location(settings.database_url))
    for role in [Role.TRANSLATOR] if settings.panel else list(Role):
        provider = settings.provider(role)
        if provider.missing(role):
            log.info("%s: not configured", role.value)
        else:
            base_url = mask_url_credentials(provider.base_url or "")
            log.info("%s: model %s at %s", role.value, provider.model, base_url)
    for name in settings.panel:
        provider = settings.judge_provider(name)
        base_url = mask_url_credentials(provider.base_url or "")
        log.info("judge %s (panel, %s): model %s at %s", name, settings.panel_rule,
                 provider.model, base_url)  # fmt: skip


def build_lean_step(
    settings: Settings, sessions: async_sessionmaker[AsyncSession]
) -> LeanStep | None:
    """The Lean step when FAITHSCREEN_LEAN_SERVER_URL is set; None: Lean is not checked."""
    if not settings.lean.server_url:
        log.info("lean: not checked (FAITHSCREEN_LEAN_SERVER_URL is not set)")
        return None
    client = LeanClient(settings.lean)
    log.info("lean: Kimina Lean Server at %s", client.server_url)
    return LeanStep(sessions, client)


def _report_worker_end(task: asyncio.Task[None]) -> None:
    # In `serve` nobody awaits the worker until shutdown: a crash would go unseen while
    # the API keeps queueing work that no one picks up.
    if not task.cancelled() and task.exception() is not None:
        log.critical("the worker stopped on an error", exc_info=task.exception())


@dataclass
class Runtime:
    settings: Settings
    engine: AsyncEngine
    sessions: async_sessionmaker[AsyncSession]
    clients: dict[Role, LLMClient]
    # A panel's judges' clients, by judge name (empty with a single judge).
    judge_clients: dict[str, LLMClient] = field(default_factory=dict)
    worker: Worker | None = None
    pipeline: ScreeningPipeline | None = None
    lean: LeanStep | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _worker_task: asyncio.Task[None] | None = None
    _maintenance_task: asyncio.Task[None] | None = None

    @classmethod
    def create(cls, settings: Settings, *, with_worker: bool) -> Runtime:
        engine = create_engine(
            settings.database_url,
            pool_size=settings.database_pool_size,
            max_overflow=settings.database_max_overflow,
        )
        sessions = make_session_factory(engine)
        # One name for this process's job leases and provider budget leases alike.
        owner = new_owner_name()
        budgets = Budgets(sessions, owner=owner)
        clients = build_clients(settings, budgets)
        _log_configuration(settings)
        judges = build_judge_clients(settings, budgets)
        runtime = cls(settings, engine, sessions, clients, judges)
        missing = settings.missing_providers()
        if with_worker and missing:
            # Every queued job needs both roles' calls (supplied replies are decided at
            # intake, or queued for a Lean check a worker with providers makes): a worker
            # here could only turn them into provider errors, while a worker that has the
            # providers would screen them.
            log.warning(NO_PROVIDERS_NO_WORKER, ", ".join(missing))
            with_worker = False
        if with_worker:
            runtime.lean = build_lean_step(settings, sessions)
            runtime.pipeline = ScreeningPipeline(
                sessions, clients, settings, runtime.judge_clients, lean=runtime.lean
            )
            runtime.worker = Worker(
                sessions,
                runtime.pipeline,
                lease_seconds=settings.job_lease_seconds,
                capacity=settings.effective_worker_capacity,
                failures=FailurePolicy(sessions),
                owner=owner,
                free_dead_local_jobs=engine.dialect.name == "sqlite",
            )
        return runtime

    def start(self) -> None:
        tune_garbage_collection()
        if self.worker is not None:
            self._worker_task = asyncio.create_task(
                self.worker.run(self._stop, grace_seconds=self.settings.shutdown_grace_seconds)
            )
            self._worker_task.add_done_callback(_report_worker_end)
            # Done jobs past retention, metric changes folded: app/worker/maintenance.py.
            self._maintenance_task = asyncio.create_task(
                maintain(
                    self.sessions, self._stop, job_retention_days=self.settings.job_retention_days
                )
            )

    @property
    def worker_running(self) -> bool:
        return self._worker_task is not None and not self._worker_task.done()

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
        """Stop the worker (it drains within the grace), then close clients and engine,
        even when the worker ended on an error (logged already; raised here again)."""
        self._stop.set()
        try:
            if self._worker_task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await self._worker_task
            if self._maintenance_task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await self._maintenance_task
            if self.pipeline is not None:
                # Writes of cancelled screenings may still be committing.
                await self.pipeline.idle()
        finally:
            for client in [*self.clients.values(), *self.judge_clients.values()]:
                await client.aclose()
            if self.lean is not None:
                await self.lean.aclose()
            await self.engine.dispose()
