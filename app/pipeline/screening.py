"""Runs one queued screening: the LLM calls for the translator and each judge (the single
judge, or every judge of the screening's panel, each on its own client), then the ruling.

Each call's review is committed as soon as the call returns (sharing its transaction with
other screenings' writes: app/pipeline/group_commit.py), and no transaction is ever held open
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
from app.pipeline.group_commit import Finish, JobLost, Recorder, Start, Started
from app.pipeline.judged import decide_judged, decide_supplied_calls, judge_names
from app.pipeline.lean_step import LeanStep, ruled_after_lean, stopped_by_lean
from app.pipeline.plan import Limits, NextCall, PastCall, plan_next
from app.pipeline.review_records import call_record, reading_of_record
from app.pipeline.ruling import ScreeningRuling
from app.policy import RoleResult
from app.prompts import (
    Message,
    confirmation_messages,
    format_retry_messages,
    judge_messages,
    translator_messages,
)
from app.prompts.elaborated import goal_prompt_version, with_elaborated_goal
from app.repositories import reviews
from app.settings import ProviderSettings, Settings, judge_prefix
from app.vocabulary import SINGLE_JUDGE, Pair, Purpose, ReplyFormat, Role

__all__ = ["Claim", "JobLost", "ScreeningPipeline"]


@dataclass(frozen=True, slots=True)
class Claim:
    job_id: int
    screening_id: str
    owner: str


@dataclass(frozen=True, slots=True)
class Seat:
    """Whose calls these are: the translator, or a judge by name (`judge` for the single
    judge, whose reviews store that name but whose reasons carry none)."""

    role: Role
    judge: str | None = None
    panel: bool = False

    @property
    def stored_name(self) -> str | None:
        return self.judge if self.panel else None


class ScreeningPipeline:
    def __init__(
        self,
        session_factory: async_sessionmaker[AsyncSession],
        clients: Mapping[Role, LLMClient],
        settings: Settings,
        judges: Mapping[str, LLMClient] | None = None,
        lean: LeanStep | None = None,
    ) -> None:
        """`clients`: the translator's and the single judge's; `judges`: a panel's, by
        judge name; `lean`: the Lean step, when FAITHSCREEN_LEAN_SERVER_URL is set."""
        self._sessions = session_factory
        self._clients = clients
        self._judges = judges or {}
        self._settings = settings
        self._recorder = Recorder(session_factory)
        self._lean = lean

    async def run(self, claim: Claim) -> ScreeningRuling | None:
        """Screen the claimed pair; returns the ruling, or None if it was done already."""
        started = await self._recorder.start(Start(claim.job_id, claim.owner, claim.screening_id))
        if started is None:
            return None
        pair, confirmations, panel = started.pair, started.confirmations, started.panel
        lean = None if self._lean is None else await self._lean.check(claim.screening_id, pair)
        stopped = None if lean is None else stopped_by_lean(pair, lean)
        if stopped is not None:  # Lean decided it: no model is asked (app/policy/lean.py)
            await self._finish(claim, stopped)
            return stopped
        if started.supplied:  # queued for Lean alone: the client's replies decide
            ruled = decide_supplied_calls(
                pair, started.past.get(Role.TRANSLATOR, []), started.judges, panel
            )
            ruled = ruled if lean is None else ruled_after_lean(ruled)
            await self._finish(claim, ruled)
            return ruled
        goal = None if lean is None else lean.goal
        translator = Seat(Role.TRANSLATOR)
        seats = {name: Seat(Role.JUDGE, name, panel is not None) for name in judge_names(panel)}
        async with asyncio.TaskGroup() as group:
            translating = group.create_task(
                self._run_role(
                    claim, translator, pair, _past(started, translator), confirmations, goal
                )
            )
            judging = {
                name: group.create_task(
                    self._run_role(claim, seat, pair, _past(started, seat), confirmations, goal)
                )
                for name, seat in seats.items()
            }
        results = {name: task.result() for name, task in judging.items()}
        screening = decide_judged(pair, translating.result(), results, panel, confirmations)
        if lean is not None:
            screening = ruled_after_lean(screening)
        await self._finish(claim, screening)
        return screening

    async def _run_role(
        self,
        claim: Claim,
        seat: Seat,
        pair: Pair,
        past: list[PastCall],
        confirmations: int,
        goal: str | None = None,
    ) -> RoleResult:
        """`goal`: what Lean elaborated the statement to, shown beside it (None: no Lean)."""
        role = seat.role
        limits = self._limits(seat, confirmations)
        # Read once per run of the role and recorded on each review: a re-score replays it.
        evidential = self._provider(seat).evidential
        reply_format = ReplyFormat(self._provider(seat).reply_format)
        while True:
            step = plan_next(past, limits)
            if isinstance(step, RoleResult):
                return step
            messages = self._messages(role, pair, step, reply_format)
            if goal is not None:
                messages = with_elaborated_goal(messages, pair, goal)
            result = await self._call(seat, messages, step.max_tokens)
            record = call_record(
                claim.screening_id,
                role,
                step,
                messages,
                result,
                seat.stored_name,
                evidential=evidential,
                reply_format=reply_format,
            )
            if goal is not None:
                version = goal_prompt_version(record.prompt_version)
                record = dataclasses.replace(record, prompt_version=version)
            await self._store(record)
            past.append(
                PastCall(
                    attempt=step.attempt,
                    purpose=step.purpose,
                    reading=reading_of_record(record),
                    raw_response=record.raw_response,
                    max_tokens=step.max_tokens,
                    evidential=record.evidential,
                )
            )

    def _provider(self, seat: Seat) -> ProviderSettings:
        if seat.panel and seat.judge is not None:
            return self._settings.panel_providers.get(seat.judge, ProviderSettings())
        return self._settings.provider(seat.role)

    def _limits(self, seat: Seat, confirmations: int) -> Limits:
        provider = self._provider(seat)
        return Limits(
            format_retries=self._settings.format_retries,
            confirmations=confirmations,
            max_tokens=provider.max_tokens,
            max_tokens_ceiling=max(provider.max_tokens, provider.max_tokens_ceiling),
        )

    @staticmethod
    def _messages(
        role: Role, pair: Pair, step: NextCall, reply_format: ReplyFormat
    ) -> list[Message]:
        if step.purpose is Purpose.CONFIRMATION:
            return confirmation_messages(role, pair, reply_format)
        first = (translator_messages if role is Role.TRANSLATOR else judge_messages)(
            pair, reply_format
        )
        if step.retry_of is None:
            return first
        bad = step.retry_of
        return format_retry_messages(first, bad.raw_response or "", bad.reading.parse_status)

    async def _call(self, seat: Seat, messages: list[Message], max_tokens: int) -> CallResult:
        panel_judge = seat.judge if seat.panel else None
        if panel_judge is not None:
            client = self._judges.get(panel_judge)
        else:
            client = self._clients.get(seat.role)
        if client is None:
            return CallResult.not_sent(_not_configured(seat, self._settings))
        result = await client.complete(messages, max_tokens=max_tokens)
        if result.failed:
            # Where the call went, so a mistyped base URL is plain from the review alone.
            where = endpoint_of(self._provider(seat).base_url or "")
            return dataclasses.replace(result, error=f"{result.error} (at {where})")
        return result

    async def _store(self, record: reviews.ReviewRecord) -> None:
        await self._recorder.store(record)

    async def _finish(self, claim: Claim, screening: ScreeningRuling) -> None:
        """Job completion, outcome and review queue item in one transaction (an outcome
        that needs a person never lands without its item), only while this worker holds
        the job; JobLost otherwise."""
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


def _past(started: Started, seat: Seat) -> list[PastCall]:
    if seat.role is Role.TRANSLATOR:
        return started.past.get(Role.TRANSLATOR, [])
    return started.judges.get(seat.judge or SINGLE_JUDGE, [])


def _not_configured(seat: Seat, settings: Settings) -> str:
    if seat.panel and seat.judge is not None:
        prefix = judge_prefix(seat.judge)
        # Its panel was named where it was submitted; this worker's settings lack the judge.
        return f"no provider configured for judge {seat.judge}: set {prefix}BASE_URL, {prefix}MODEL"
    missing = ", ".join(settings.provider(seat.role).missing(seat.role))
    return f"no provider configured for {seat.role.value}: set {missing}"


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
