"""A scripted OpenAI-compatible provider that enforces its own limits, for bench/scale_bench.py.

    python -m bench.limited_provider --rpm 720 --tpm 600000 --concurrency 32 --latency-ms 1000

Per model, as real providers do: requests a minute, tokens a minute and calls in flight.
The minute limits are token buckets refilled continuously that hold `--burst-seconds` of
the limit (a provider that quantizes 720 rpm to 12 a second), so a client spacing its calls
evenly at the limit is never refused, and one sending faster is. Past any limit the call
is answered 429 with `Retry-After` (the seconds until the bucket has room, rounded up) and
the second it happened in is counted, per limit. A call's tokens are what its reply's
`usage` reports (the prompt's characters / 4, plus the reply's), charged when it arrives.

An admitted call is answered FAITHFUL (in the format asked) after a latency drawn from a
log-normal distribution with the given median and `--latency-sigma` (0.35: p95 about 1.8x
the median), as a provider's latency varies with its load and the reply's length.

GET /stats answers what it saw, as JSON: per model the calls answered 200 and the
SHA-256 of each one's prompt text (to compare with the prompts the service stored), the
429s per limit, the seconds in which a limit was exceeded, and the first and last second
a call was answered. Nothing is printed per call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from tests.support.scripted_openai import (
    HttpError,
    RawBody,
    RecordedRequest,
    Reply,
    ScriptedOpenAI,
    Step,
    _estimated_usage,
    faithful_in_format,
)


@dataclass
class Bucket:
    """A token bucket: `capacity` at most, refilled at `rate` a second."""

    rate: float
    capacity: float
    level: float = 0.0
    at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.level = self.capacity

    def take(self, amount: float, now: float) -> float:
        """0.0 when `amount` was taken; otherwise the seconds until it could be."""
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level >= amount:
            self.level -= amount
            return 0.0
        return (amount - self.level) / self.rate


@dataclass
class ModelState:
    requests: Bucket
    tokens: Bucket | None
    in_flight: int = 0
    max_in_flight: int = 0
    answered: int = 0
    tokens_answered: int = 0
    prompts: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    exceeded_seconds: dict[str, set[int]] = field(default_factory=lambda: defaultdict(set))
    first: float | None = None
    last: float | None = None
    per_second: Counter[int] = field(default_factory=Counter)


class LimitedProvider(ScriptedOpenAI):
    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(latency=0.0, default=self._decide, port=args.port, record=False)
        self.args = args
        self.models: dict[str, ModelState] = {}
        self.random = random.Random(args.seed)
        self.started = time.time()

    def _model(self, name: str) -> ModelState:
        if name not in self.models:
            a, burst = self.args, self.args.burst_seconds
            per_second = a.rpm / 60
            requests = Bucket(per_second, max(1.0, per_second * burst))
            tokens = Bucket(a.tpm / 60, a.tpm / 60 * burst) if a.tpm else None
            self.models[name] = ModelState(requests, tokens)
        return self.models[name]

    def _select(self, request: RecordedRequest) -> tuple[Step, bool]:
        if request.method == "GET" and request.path == "/stats":
            return RawBody(json.dumps(self.stats())), False
        return super()._select(request)

    def _decide(self, request: RecordedRequest) -> Step:
        """Admit the call (the reply after its latency) or refuse it with a 429."""
        state, now = self._model(request.model or ""), time.monotonic()
        reply = faithful_in_format(request)
        content = reply.content if isinstance(reply, Reply) else ""
        usage = _estimated_usage(request, len(content or ""))
        refusal = self._refusal(state, usage["total_tokens"], now)
        second = int(time.time())
        if refusal is not None:
            limit, wait = refusal
            state.refused[limit] += 1
            state.exceeded_seconds[limit].add(second)
            return HttpError(429, headers={"Retry-After": str(max(1, math.ceil(wait)))})
        state.in_flight += 1
        state.max_in_flight = max(state.max_in_flight, state.in_flight)
        state.answered += 1
        state.tokens_answered += usage["total_tokens"]
        state.prompts[hashlib.sha256(request.text.encode()).hexdigest()] += 1
        state.per_second[second] += 1
        state.first = state.first if state.first is not None else time.time()
        state.last = time.time()
        delay = self.args.latency_ms / 1000 * math.exp(self.random.gauss(0, self.args.sigma))
        if isinstance(reply, Reply):
            return Reply(reply.content, usage=usage, delay=delay)
        return reply

    def _refusal(self, state: ModelState, tokens: int, now: float) -> tuple[str, float] | None:
        if self.args.concurrency and state.in_flight >= self.args.concurrency:
            return "concurrency", 1.0
        wait = state.requests.take(1, now)
        if wait:
            return "requests_per_minute", wait
        if state.tokens is not None:
            wait = state.tokens.take(tokens, now)
            if wait:
                state.requests.level += 1  # the refused call's request is given back
                return "tokens_per_minute", wait
        return None

    async def _answer(self, step: Step, request: RecordedRequest, writer: Any) -> bool:
        if isinstance(step, HttpError | RawBody):
            return await super()._answer(step, request, writer)
        state = self._model(request.model or "")
        try:
            return await super()._answer(step, request, writer)
        finally:
            state.in_flight -= 1

    def stats(self) -> dict[str, Any]:
        return {
            "limits": {
                "rpm": self.args.rpm,
                "tpm": self.args.tpm,
                "concurrency": self.args.concurrency,
                "latency_ms": self.args.latency_ms,
                "sigma": self.args.sigma,
                "burst_seconds": self.args.burst_seconds,
            },
            "models": {
                name: {
                    "answered": s.answered,
                    "tokens": s.tokens_answered,
                    "max_in_flight": s.max_in_flight,
                    "prompts": dict(s.prompts),
                    "refused": dict(s.refused),
                    "exceeded_seconds": sorted(set().union(*s.exceeded_seconds.values())),
                    "exceeded_seconds_by_limit": {k: len(v) for k, v in s.exceeded_seconds.items()},
                    "first": s.first,
                    "last": s.last,
                    "per_second": {str(k): v for k, v in sorted(s.per_second.items())},
                }
                for name, s in self.models.items()
            },
        }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--rpm", type=float, default=720, help="requests a minute per model")
    parser.add_argument("--tpm", type=float, default=0, help="tokens a minute per model (0: none)")
    parser.add_argument("--concurrency", type=int, default=0, help="calls in flight per model")
    parser.add_argument("--latency-ms", type=float, default=1000.0, help="median latency")
    parser.add_argument("--sigma", type=float, default=0.35, help="log-normal sigma")
    parser.add_argument("--burst-seconds", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1)
    provider = LimitedProvider(parser.parse_args(argv))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(provider.serve_forever())


if __name__ == "__main__":
    main()
