"""Runs one queued screening: the LLM calls for both roles, then the ruling.

Each call's review is committed as soon as the call returns (sharing its transaction with
other screenings' writes: app/pipeline/recorder.py), and no transaction is ever held open
across an LLM call. The outcome is recorded together with the job's completion, and only
while this worker still holds the job's lease.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.llm.call import CallResult
from app.llm.client import LLMClient
from app.pipeline.plan import Limits, NextCall, PastCall, plan_next
from app.pipeline.recorder import Finish, JobLost, Recorder, Start
from app.pipeline.records import call_record, reading_of_record
from app.pipeline.ruling import ScreeningRuling, decide_pair
from app.policy import RoleResult
from app.prompts import (
    Message,
    confirmation_messages,
    format_retry_messages,
    judge_messages,
    translator_messages,
)
from app.repositories import reviews
from app.settings import Settings
from app.vocabulary import Pair, Purpose, Role

__all__ = ["Claim", "JobLost", "ScreeningPipeline"]


@dataclass(frozen=True, slots=True)
class Claim:
    job_id: int
    screening_id: str
    owner: str


class ScreeningPipeline:
    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        clients: Mapping[Role, LLMClient],
        settings: Settings,
    ) -> None:
        self._sessions = session_factory
        self._clients = clients
        self._settings = settings
        self._recorder = Recorder(session_factory)

    async def run(self, claim: Claim) -> ScreeningRuling | None:
        """Screen the claimed pair; returns the ruling, or None if it was done already."""
        loaded = await self._load(claim)
        if loaded is None:
            return None
        pair, confirmations, past = loaded
        async with asyncio.TaskGroup() as group:
            tasks = {
                role: group.create_task(
                    self._run_role(claim, role, pair, past.get(role, []), confirmations)
                )
                for role in Role
            }
        screening = decide_pair(
            pair, tasks[Role.TRANSLATOR].result(), tasks[Role.JUDGE].result(), confirmations
        )
        await self._finish(claim, screening)
        return screening

    async def _load(self, claim: Claim) -> tuple[Pair, int, dict[Role, list[PastCall]]] | None:
        start = Start(claim.job_id, claim.owner, claim.screening_id)
        started = await self._recorder.start(start)
        if started is None:
            return None
        return started.pair, started.confirmations, started.past

    async def _run_role(
        self, claim: Claim, role: Role, pair: Pair, past: list[PastCall], confirmations: int
    ) -> RoleResult:
        limits = self._limits(role, confirmations)
        while True:
            step = plan_next(past, limits)
            if isinstance(step, RoleResult):
                return step
            messages = self._messages(role, pair, step)
            result = await self._call(role, messages, step.max_tokens)
            record = call_record(claim.screening_id, role, step, messages, result)
            await self._store(record)
            past.append(
                PastCall(
                    attempt=step.attempt,
                    purpose=step.purpose,
                    reading=reading_of_record(record),
                    raw_response=record.raw_response,
                    max_tokens=step.max_tokens,
                )
            )

    def _limits(self, role: Role, confirmations: int) -> Limits:
        provider = self._settings.provider(role)
        return Limits(
            format_retries=self._settings.format_retries,
            confirmations=confirmations,
            max_tokens=provider.max_tokens,
            max_tokens_ceiling=max(provider.max_tokens, provider.max_tokens_ceiling),
        )

    @staticmethod
    def _messages(role: Role, pair: Pair, step: NextCall) -> list[Message]:
        if step.purpose is Purpose.CONFIRMATION:
            return confirmation_messages(role, pair)
        first = translator_messages(pair) if role is Role.TRANSLATOR else judge_messages(pair)
        if step.retry_of is None:
            return first
        bad = step.retry_of
        return format_retry_messages(first, bad.raw_response or "", bad.reading.parse_status)

    async def _call(self, role: Role, messages: list[Message], max_tokens: int) -> CallResult:
        client = self._clients.get(role)
        if client is None:
            missing = ", ".join(self._settings.provider(role).missing(role))
            return CallResult.not_sent(f"no provider configured for {role.value}: set {missing}")
        result = await client.complete(messages, max_tokens=max_tokens)
        if result.failed:
            # Where the call went, so a mistyped base URL is plain from the review alone.
            where = endpoint_of(self._settings.provider(role).base_url or "")
            return dataclasses.replace(result, error=f"{result.error} (at {where})")
        return result

    async def _store(self, record: reviews.ReviewRecord) -> None:
        await self._recorder.store(record)

    async def _finish(self, claim: Claim, screening: ScreeningRuling) -> None:
        """Job completion, outcome and review queue item (issue 5) in
        one transaction, only while this worker holds the job; JobLost otherwise."""
        finish = Finish(
            claim.job_id,
            claim.owner,
            claim.screening_id,
            screening,
            audit_rate=self._settings.audit_rate,
            double_rate=self._settings.review_double_rate,
        )
        await self._recorder.finish(finish)

    async def idle(self) -> None:
        """Until every write handed to the recorder is committed or failed."""
        await self._recorder.idle()


def endpoint_of(base_url: str) -> str:
    """A base URL without its user info and query, which may carry credentials."""
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:  # not a number: the client could not have sent it anywhere
        port = ""
    return parts._replace(netloc=host + port, query="", fragment="").geturl()
