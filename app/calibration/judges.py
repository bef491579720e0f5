"""Which judge earns its cost: each judge's own verdicts on labelled pairs (pure).

A judge's own verdict on a pair is what the pipeline's plan took as its reading: its first
`ok` reply among the review and its format retries (confirmations are repeats of that
answer, not the answer). None `ok`: it was unreadable on that pair, which is never counted
as a wrong answer, only apart. Counted per judge, over the labelled pairs it judged:
- `catches`: MISMATCH on pairs labelled mismatch;
- `faithful`: FAITHFUL on pairs labelled faithful;
- `unreadable`: no `ok` reply, over every labelled pair it judged;
each with its 95% Wilson interval, and its calls and tokens per pair.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.reports.stats import Rate
from app.vocabulary import Label, ParseStatus, Purpose, Role, Verdict


class JudgeCall(Protocol):
    """What this tally reads of a stored call (calibration.tally.Call has it)."""

    @property
    def role(self) -> str: ...
    @property
    def judge_name(self) -> str: ...
    @property
    def purpose(self) -> str: ...
    @property
    def verdict(self) -> str | None: ...
    @property
    def parse_status(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...
    @property
    def supplied(self) -> bool: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...


# How a rate is shown (calibration.tally.rate_json, which imports this module).
RateJson = Callable[[Rate], dict[str, Any]]


def own_verdict(calls: Sequence[JudgeCall]) -> str | None:
    """A judge's verdict from its calls in the order made; None when none was `ok`."""
    for call in calls:
        if call.purpose != Purpose.CONFIRMATION and call.parse_status == ParseStatus.OK:
            return call.verdict
    return None


def calls_by_judge(calls: Iterable[JudgeCall]) -> dict[str, list[JudgeCall]]:
    found: dict[str, list[JudgeCall]] = {}
    for call in calls:
        if call.role == Role.JUDGE:
            found.setdefault(call.judge_name, []).append(call)
    return found


@dataclass(slots=True)
class JudgeTally:
    """One judge over the labelled pairs it judged."""

    models: dict[str, None] = field(default_factory=dict)  # an ordered set
    pairs: int = 0
    mismatch_pairs: int = 0
    catches: int = 0
    faithful_pairs: int = 0
    faithful: int = 0
    unreadable: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, label: str, calls: Sequence[JudgeCall]) -> None:
        verdict = own_verdict(calls)
        self.pairs += 1
        self.unreadable += verdict is None
        if label == Label.MISMATCH:
            self.mismatch_pairs += 1
            self.catches += verdict == Verdict.MISMATCH
        else:
            self.faithful_pairs += 1
            self.faithful += verdict == Verdict.FAITHFUL
        for call in calls:
            self.models["supplied" if call.supplied else call.model or "unknown"] = None
            self.calls += 1
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens

    def as_json(self, rate_json: RateJson) -> dict[str, Any]:
        per = self.pairs or 1
        tokens = self.prompt_tokens + self.completion_tokens
        return {
            "models": list(self.models),
            "pairs": self.pairs,
            "catches": rate_json(Rate.of(self.catches, self.mismatch_pairs)),
            "faithful": rate_json(Rate.of(self.faithful, self.faithful_pairs)),
            "unreadable": rate_json(Rate.of(self.unreadable, self.pairs)),
            "calls_per_pair": self.calls / per if self.pairs else None,
            "tokens_per_pair": tokens / per if self.pairs else None,
            "prompt_tokens_per_pair": self.prompt_tokens / per if self.pairs else None,
            "completion_tokens_per_pair": self.completion_tokens / per if self.pairs else None,
        }


@dataclass(slots=True)
class ByJudge:
    judges: dict[str, JudgeTally] = field(default_factory=dict)

    def add(self, label: str, calls: Iterable[JudgeCall]) -> None:
        for name, own in calls_by_judge(calls).items():
            self.judges.setdefault(name, JudgeTally()).add(label, own)

    def as_json(self, rate_json: RateJson) -> dict[str, Any]:
        return {name: self.judges[name].as_json(rate_json) for name in sorted(self.judges)}
