"""`faithscreen providers check`: one short contract probe to each role's provider.

Sent as the worker sends a review (the real LLM client, the role's prompt, the contract
parser) on a built-in pair, once per role, the roles at once. For each role it prints
whether the provider was reachable, whether the model answered, the latency, the tokens,
and whether the reply was readable under the contract. Exit 0 when every role passes,
1 otherwise, the cause named per role. Nothing is stored.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import typer

from app.cli.root import cli
from app.cli.terminal import echo
from app.contract.reading import Reading
from app.llm.call import CallResult
from app.llm.client import LLMClient
from app.pipeline.review_records import reading_of_call
from app.pipeline.screening import endpoint_of
from app.policy.reasons import REASON_DESCRIPTIONS, not_faithful_reason
from app.prompts import review_messages
from app.settings import Settings, get_settings
from app.vocabulary import Pair, ParseStatus, ReplyFormat, Role

EXIT_FAILED = 1
# A pair any model should find faithful; the verdict itself is not checked, only that
# the reply could be read.
PROBE_PAIR = Pair(
    informal="For every natural number n, n + 0 = n.",
    formal="theorem probe_add_zero (n : ℕ) : n + 0 = n := by sorry",
    header="",
)

providers = typer.Typer(help="The LLM providers of each role.", no_args_is_help=True)
cli.add_typer(providers, name="providers")


@dataclass(frozen=True, slots=True)
class Probe:
    role: Role
    # "model at endpoint"; for a role not configured, the variables to set.
    target: str
    result: CallResult | None = None
    reading: Reading | None = None
    # A panel judge's name (FAITHSCREEN_JUDGES); None for the translator and single judge.
    judge: str | None = None

    @property
    def name(self) -> str:
        return self.role.value if self.judge is None else f"judge {self.judge}"

    @property
    def cause(self) -> str | None:
        """Why this role fails the check; None when it passes."""
        if self.result is None:
            return f"not configured: set {self.target}"
        if self.result.failed:
            return self.result.error
        if self.result.refusal:
            return f"the provider refused: {self.result.refusal}"
        if self.reading is not None and self.reading.parse_status is not ParseStatus.OK:
            reason = not_faithful_reason(self.role, self.reading)
            return f"unreadable ({self.reading.parse_status.value}): {REASON_DESCRIPTIONS[reason]}"
        return None


@providers.command("check")
def check_command() -> None:
    """Send one short contract probe to each role's provider; print, per role: reachable,
    answered, latency, tokens, readable. Exit 0 when every role passes, 1 otherwise."""
    probes = asyncio.run(probe_all(get_settings()))
    for probe in probes:
        echo(describe(probe))
    failed = [probe for probe in probes if probe.cause is not None]
    if failed:
        names = ", ".join(probe.name for probe in failed)
        echo(f"faithscreen providers check: failed for {names}", err=True)
        raise typer.Exit(EXIT_FAILED)
    echo("every role answered, readably")


async def probe_all(settings: Settings) -> list[Probe]:
    """Each role's provider; with a judge panel, the translator's and each judge's."""
    if settings.panel:
        probes = [probe(settings, Role.TRANSLATOR)]
        probes += [probe(settings, Role.JUDGE, name) for name in settings.panel]
        return list(await asyncio.gather(*probes))
    return list(await asyncio.gather(*(probe(settings, role) for role in Role)))


async def probe(settings: Settings, role: Role, judge: str | None = None) -> Probe:
    # A panel judge is complete, or the settings were refused before this ran.
    provider = settings.provider(role) if judge is None else settings.judge_provider(judge)
    missing = provider.missing(role) if judge is None else []
    if missing:
        return Probe(role, ", ".join(missing))
    target = f"{provider.model} at {endpoint_of(provider.base_url or '')}"
    reply_format = ReplyFormat(provider.reply_format)
    async with LLMClient(provider, concurrency=1, role=role) as client:
        result = await client.complete(review_messages(role, PROBE_PAIR, reply_format))
    reading = None if result.failed else reading_of_call(result, reply_format, role)
    return Probe(role, target, result, reading, judge)


def describe(probe: Probe) -> str:
    """The role's block: a heading, then one line per question, and the cause."""
    result, cause = probe.result, probe.cause
    if result is None:
        return f"{probe.name}: not configured\n  cause      {cause}\n"
    lines = [
        f"{probe.name}: {probe.target}",
        f"  reachable  {_reachable(result)}",
        f"  answered   {_answered(result)}",
        f"  latency    {result.latency_ms} ms",
        f"  tokens     {_tokens(result)}",
        f"  readable   {_readable(probe.reading)}",
    ]
    if cause is not None:
        lines.append(f"  cause      {cause}")
    return "\n".join(lines) + "\n"


def _reachable(result: CallResult) -> str:
    if result.http_status is None:
        return "no"
    return f"yes (HTTP {result.http_status})"


def _answered(result: CallResult) -> str:
    if result.failed:
        return "no"
    if result.refusal:
        return "no (refused)"
    model = result.model or "unnamed model"
    return f"yes ({model}, finish {result.finish_reason or 'none'})"


def _tokens(result: CallResult) -> str:
    counts = [(name.removesuffix("_tokens"), n) for name, n in result.usage.items() if n]
    return ", ".join(f"{name} {n}" for name, n in counts) or "none reported"


def _readable(reading: Reading | None) -> str:
    if reading is None:
        return "no"
    status = reading.parse_status.value
    if reading.parse_status is not ParseStatus.OK:
        return f"no ({status})"
    return f"yes ({status}, verdict {reading.verdict.value})"
