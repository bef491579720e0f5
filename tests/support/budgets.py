"""Shared by the provider-budget tests: a provider's settings with its limits, and gates
on one database as separate processes would hold them, whose sleeps are recorded instead
of slept."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.budgets.service import Budgets, ProviderGate
from app.settings import ProviderSettings

Sessions = async_sessionmaker[AsyncSession]


def limited_provider(base_url: str = "https://llm.example/v1", **limits: int) -> ProviderSettings:
    """A provider with these shared-budget `limits` (requests_per_minute, ...)."""
    return ProviderSettings(
        base_url=base_url,
        model="m",
        timeout_seconds=100,
        connect_timeout_seconds=5,
        **limits,  # type: ignore[arg-type]
    )


class Sleeps(list[float]):
    """A gate's sleep: records each wait instead of taking it."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def gate_of(sessions: Sessions, settings: ProviderSettings, owner: str) -> ProviderGate:
    """The gate a process named `owner` holds for `settings`' budget."""
    gate = Budgets(sessions, owner=owner).gate(settings)
    gate.sleep = Sleeps()
    return gate
