"""The calibration of labelled screenings, folded in one screening at a time (pure).

A *labelled* screening carries the client's `label`; only those that are done count in the
matrix, each by its current outcome (after any applied re-scoring). Every rate keeps its
denominator and its 95% Wilson interval, and an unreadable reply is never a wrong answer:
it shows as `needs_review`, counted apart, with its reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.calibration.judges import ByJudge
from app.reports.reasons import counted_reasons
from app.reports.stats import LatencyHistogram, Rate
from app.reports.summary import timed
from app.vocabulary import LABELS, LEAN_NOT_CHECKED, OUTCOMES, SINGLE_JUDGE, Label, Outcome

KINDS = ("theorem", "definition", "other")
PASSED, FLAGGED = Outcome.PASSED, Outcome.FLAGGED
FAITHFUL, MISMATCH = Label.FAITHFUL, Label.MISMATCH
# The model named for a role whose replies the client supplied.
SUPPLIED = "supplied"


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """What decided a screening: change one of these, and compare on the same pairs."""

    translator_model: str | None
    judge_model: str | None
    prompt_version: str | None
    parser_version: str | None
    policy_version: str | None
    evidence_version: str | None
    confirmations: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One stored review of a screening, as calibration counts its cost."""

    role: str
    model: str | None
    prompt_version: str | None
    parser_version: str
    supplied: bool
    http_status: int | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: int | None
    # Which judge made it ("" for the translator), why, and its current reading: what
    # `by_judge` counts (calibration/judges.py).
    judge_name: str = ""
    purpose: str = "review"
    verdict: str | None = None
    parse_status: str | None = None
    # Its model was marked evidential when the call was made (FAITHSCREEN_*_EVIDENTIAL).
    evidential: bool = True

    @property
    def seat(self) -> str:
        """Whose call: `translator`, `judge` (the single judge) or `judge:<name>`, as the
        reasons name them."""
        if self.role != "judge" or self.judge_name in ("", SINGLE_JUDGE):
            return self.role
        return f"judge:{self.judge_name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelledScreening:
    label: str
    outcome: str | None  # None while it is not done
    reasons: Sequence[str]
    tags: Sequence[str]
    kind: str  # one of KINDS
    confirmations: int
    policy_version: str | None
    evidence_version: str | None
    calls: Sequence[Call]
    # What the Lean server said of the pair (app/lean), `not_checked` when none was asked.
    lean_status: str = LEAN_NOT_CHECKED

    def config(self) -> Config:
        return Config(
            translator_model=_model_of(self.calls, "translator"),
            judge_model=_model_of(self.calls, "judge"),
            prompt_version=next((c.prompt_version for c in self.calls if c.prompt_version), None),
            parser_version=self.calls[0].parser_version if self.calls else None,
            policy_version=self.policy_version,
            evidence_version=self.evidence_version,
            confirmations=self.confirmations,
        )


def _model_of(calls: Sequence[Call], role: str) -> str | None:
    """The role's model; a panel's judges as `a=model, b=model` (the single judge's alone)."""
    models: dict[str, str | None] = {}
    for call in calls:
        if call.role == role:
            models.setdefault(call.judge_name, SUPPLIED if call.supplied else call.model)
    if len(models) <= 1 or role != "judge":
        return next(iter(models.values()), None)
    return ", ".join(f"{name}={model}" for name, model in sorted(models.items()))


@dataclass(slots=True)
class Matrix:
    """Labelled, done screenings counted by label and outcome."""

    counts: dict[str, Counter[str]] = field(
        default_factory=lambda: {label: Counter() for label in LABELS}
    )

    def add(self, label: str, outcome: str) -> None:
        self.counts[label][outcome] += 1

    @property
    def labelled(self) -> int:
        return sum(sum(row.values()) for row in self.counts.values())

    def cell(self, label: str, outcome: str) -> int:
        return self.counts[label][outcome]

    def rates(self) -> dict[str, Rate]:
        faithful, mismatch = self.counts[FAITHFUL], self.counts[MISMATCH]
        n_faithful, n_mismatch = sum(faithful.values()), sum(mismatch.values())
        flagged = faithful[FLAGGED] + mismatch[FLAGGED]
        passed = faithful[PASSED] + mismatch[PASSED]
        return {
            "false_pass": Rate.of(mismatch[PASSED], n_mismatch),
            "false_alarm": Rate.of(n_faithful - faithful[PASSED], n_faithful),
            "false_flag": Rate.of(faithful[FLAGGED], n_faithful),
            "flag_precision": Rate.of(mismatch[FLAGGED], flagged),
            "pass_precision": Rate.of(faithful[PASSED], passed),
            "automation": Rate.of(passed + flagged, self.labelled),
        }

    def as_json(self) -> dict[str, Any]:
        return {
            "labelled": self.labelled,
            "matrix": {label: {o: self.cell(label, o) for o in OUTCOMES} for label in LABELS},
            "rates": {name: rate_json(rate) for name, rate in self.rates().items()},
        }


def rate_json(rate: Rate) -> dict[str, Any]:
    """A rate as the API shows it: k of n, the share, its 95% Wilson interval (nulls at n=0)."""
    return {
        "k": rate.numerator,
        "n": rate.denominator,
        "rate": rate.value,
        "low": rate.low,
        "high": rate.high,
    }


@dataclass(slots=True)
class Cost:
    screenings: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)

    def add(self, calls: Sequence[Call]) -> None:
        self.screenings += 1
        for call in calls:
            self.calls += 1
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens
            # A supplied reply, or a call that never reached a provider, has no latency.
            if timed(call) and call.latency_ms is not None:
                self.latency.add(call.latency_ms)

    def as_json(self) -> dict[str, Any]:
        per = self.screenings or 1
        return {
            "screenings": self.screenings,
            "calls_per_screening": self.calls / per if self.screenings else None,
            "prompt_tokens_per_screening": self.prompt_tokens / per if self.screenings else None,
            "completion_tokens_per_screening": (
                self.completion_tokens / per if self.screenings else None
            ),
            "latency_p50_ms": self.latency.quantile(0.5),
            "latency_p95_ms": self.latency.quantile(0.95),
        }


@dataclass(slots=True)
class CalibrationTally:
    """Fold labelled screenings in with `add`; `as_json` is the calibration object."""

    unlabelled: int = 0
    pending: int = 0
    overall: Matrix = field(default_factory=Matrix)
    by_tag: dict[str, Matrix] = field(default_factory=dict)
    by_kind: dict[str, Matrix] = field(default_factory=lambda: {k: Matrix() for k in KINDS})
    needs_review_reasons: Counter[str] = field(default_factory=Counter)
    configs: Counter[Config] = field(default_factory=Counter)
    cost: Cost = field(default_factory=Cost)
    by_judge: ByJudge = field(default_factory=ByJudge)
    by_lean_status: dict[str, Matrix] = field(default_factory=dict)
    # Seat -> screenings in which a call of it went to a model marked not evidential: such
    # a model's FAITHFUL never passes, so its verdicts are not what the rates measure.
    non_evidential: Counter[str] = field(default_factory=Counter)

    def add(self, screening: LabelledScreening) -> None:
        if screening.outcome is None:
            self.pending += 1
            return
        label, outcome = screening.label, screening.outcome
        self.overall.add(label, outcome)
        for tag in dict.fromkeys(screening.tags):
            self.by_tag.setdefault(tag, Matrix()).add(label, outcome)
        self.by_kind[screening.kind].add(label, outcome)
        self.by_lean_status.setdefault(screening.lean_status, Matrix()).add(label, outcome)
        if outcome == Outcome.NEEDS_REVIEW:
            self.needs_review_reasons.update(counted_reasons(screening.reasons))
        self.configs[screening.config()] += 1
        self.cost.add(screening.calls)
        self.by_judge.add(label, screening.calls)
        self.non_evidential.update({c.seat for c in screening.calls if not c.evidential})

    def as_json(self) -> dict[str, Any]:
        return {
            **self.overall.as_json(),
            "unlabelled": self.unlabelled,
            "pending": self.pending,
            "partial": self.pending > 0,
            "by_tag": {tag: self.by_tag[tag].as_json() for tag in sorted(self.by_tag)},
            "by_kind": {kind: matrix.as_json() for kind, matrix in self.by_kind.items()},
            "needs_review_reasons": dict(sorted(self.needs_review_reasons.items())),
            "configs": _configs_json(self.configs),
            "cost": self.cost.as_json(),
            "by_judge": self.by_judge.as_json(rate_json),
            "by_lean_status": {
                status: self.by_lean_status[status].as_json()
                for status in sorted(self.by_lean_status)
            },
            "non_evidential": dict(sorted(self.non_evidential.items())),
        }


def _configs_json(configs: Mapping[Config, int]) -> list[dict[str, Any]]:
    ordered = sorted(configs.items(), key=lambda item: -item[1])
    return [{**_config_fields(config), "count": count} for config, count in ordered]


def _config_fields(config: Config) -> dict[str, Any]:
    return {name: getattr(config, name) for name in Config.__dataclass_fields__}
