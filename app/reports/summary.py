"""The summary report, built from stored rows (pure: rows in, report out).

A *role-screening* is one screening's calls for one role; its *final reading* is its last
review or format-retry call (confirmations are second opinions, not readings). Reviews are
folded in one at a time (ReviewTally), so they can be streamed from the database: no list
of calls is held, and latency quantiles come from a bounded histogram (stats.py: exact
below 10 s, within 0.5% above).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.reports.stats import LatencyHistogram, Rate, cohens_kappa
from app.vocabulary import Outcome, ParseStatus, Purpose, Role, Verdict

# Readings the model gave and meant (ok) kept apart from the model saying "unclear", and
# both apart from replies nobody could read.
READINGS = ("ok", "model_unclear", "unreadable", "truncated", "empty", "provider_error", "refused")
UNREADABLE = frozenset({"missing", "invalid", "conflicting", "bare_cr"})
READING_PURPOSES = frozenset({Purpose.REVIEW.value, Purpose.FORMAT_RETRY.value})
TOKEN_KINDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
MISMATCH = Verdict.MISMATCH.value


@dataclass(frozen=True, slots=True)
class ScreeningRow:
    id: str
    outcome: str | None
    reasons: Sequence[str]
    final_decision: str | None
    audit: bool


@dataclass(frozen=True, slots=True)
class ReviewRow:
    screening_id: str
    role: str
    attempt: int
    purpose: str
    model: str | None
    prompt_version: str | None
    verdict: str
    parse_status: str
    latency_ms: int | None
    usage: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class HumanRates:
    """Against people's final decisions: how often `flagged` was right, and how often an
    audited `passed` was in fact a mismatch."""

    flagged_precision: Rate
    false_pass: Rate


@dataclass(frozen=True, slots=True)
class GroupReport:
    role: str
    model: str | None
    prompt_version: str | None
    screenings: int
    calls: int
    readings: dict[str, int]
    format_retry: Rate
    retry_recovered: Rate
    truncation: Rate
    tokens: dict[str, int]
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    human: HumanRates


@dataclass(frozen=True, slots=True)
class Agreement:
    """Translator vs judge over screenings where both final readings are status ok."""

    screenings: int
    kappa: float | None


@dataclass(frozen=True, slots=True)
class Summary:
    screenings: int
    outcomes: dict[str, int]
    reasons: dict[str, int]
    groups: list[GroupReport]
    agreement: Agreement
    human: HumanRates


def reading_of(review: ReviewRow) -> str:
    return reading_from(review.parse_status, review.verdict)


def reading_from(parse_status: str, verdict: str) -> str:
    if parse_status == ParseStatus.OK.value:
        return "model_unclear" if verdict == Verdict.UNCLEAR.value else "ok"
    return "unreadable" if parse_status in UNREADABLE else parse_status


@dataclass(slots=True)
class _RoleScreening:
    """One screening's calls for one role, reduced as they arrive to what the report needs:
    its final reading (verdict and parse status) and whether it needed a format retry."""

    final_attempt: int = 0
    final_verdict: str | None = None
    final_status: str | None = None
    retried: bool = False

    def add(self, review: ReviewRow) -> None:
        self.retried = self.retried or review.purpose == Purpose.FORMAT_RETRY.value
        later = self.final_status is None or review.attempt > self.final_attempt
        if review.purpose in READING_PURPOSES and later:
            self.final_attempt = review.attempt
            self.final_verdict, self.final_status = review.verdict, review.parse_status

    def final_ok(self) -> bool:
        return self.final_status == ParseStatus.OK.value

    def reading(self) -> str | None:
        if self.final_status is None or self.final_verdict is None:
            return None
        return reading_from(self.final_status, self.final_verdict)


@dataclass(slots=True)
class _GroupTally:
    """One role x model x prompt version: counters, a bounded latency histogram, and one
    _RoleScreening per screening (the calls themselves are not kept)."""

    members: dict[str, _RoleScreening] = field(default_factory=dict)
    calls: int = 0
    truncated: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)

    def add(self, review: ReviewRow) -> None:
        self.members.setdefault(review.screening_id, _RoleScreening()).add(review)
        self.calls += 1
        self.truncated += review.parse_status == ParseStatus.TRUNCATED.value
        if review.latency_ms is not None:
            self.latency.add(review.latency_ms)
        for kind in TOKEN_KINDS:
            value = review.usage.get(kind)
            # Providers omit counts or send null; a missing count adds nothing.
            self.tokens[kind] += value if isinstance(value, int) else 0


GroupKey = tuple[str, str | None, str | None]


class ReviewTally:
    """The summary built from reviews folded in one at a time (`add`), so a caller can
    stream them: memory grows with screenings x roles, never with calls."""

    def __init__(self) -> None:
        self._groups: dict[GroupKey, _GroupTally] = defaultdict(_GroupTally)

    def add(self, review: ReviewRow) -> None:
        self._groups[(review.role, review.model, review.prompt_version)].add(review)

    def summary(self, screenings: Iterable[ScreeningRow]) -> Summary:
        by_id = {s.id: s for s in screenings}
        groups = sorted(self._groups.items(), key=_order)
        return Summary(
            screenings=len(by_id),
            outcomes=_outcomes(by_id.values()),
            reasons=dict(sorted(Counter(r for s in by_id.values() for r in s.reasons).items())),
            groups=[_group(key, tally, by_id) for key, tally in groups],
            agreement=_agreement(self._groups),
            human=human_rates(by_id.values()),
        )


def summarize(screenings: Iterable[ScreeningRow], reviews: Iterable[ReviewRow]) -> Summary:
    tally = ReviewTally()
    for review in reviews:
        tally.add(review)
    return tally.summary(screenings)


def _order(item: tuple[GroupKey, object]) -> tuple[str, str, str]:
    role, model, version = item[0]
    return role, model or "", version or ""


def _outcomes(screenings: Iterable[ScreeningRow]) -> dict[str, int]:
    counts = Counter(s.outcome for s in screenings if s.outcome is not None)
    return {outcome.value: counts[outcome.value] for outcome in Outcome}


def _group(key: GroupKey, tally: _GroupTally, by_id: Mapping[str, ScreeningRow]) -> GroupReport:
    members = tally.members.values()
    retried = [m for m in members if m.retried]
    return GroupReport(
        role=key[0],
        model=key[1],
        prompt_version=key[2],
        screenings=len(members),
        calls=tally.calls,
        readings=_readings(m.reading() for m in members),
        format_retry=Rate.of(len(retried), len(members)),
        retry_recovered=Rate.of(sum(1 for m in retried if m.final_ok()), len(retried)),
        truncation=Rate.of(tally.truncated, tally.calls),
        tokens=dict(tally.tokens),
        latency_p50_ms=tally.latency.quantile(0.5),
        latency_p95_ms=tally.latency.quantile(0.95),
        human=human_rates(by_id[i] for i in tally.members if i in by_id),
    )


def _readings(readings: Iterable[str | None]) -> dict[str, int]:
    counts = Counter(r for r in readings if r is not None)
    return {reading: counts[reading] for reading in READINGS}


def _agreement(groups: Mapping[GroupKey, _GroupTally]) -> Agreement:
    finals: dict[str, dict[str, str]] = defaultdict(dict)
    for (role, _, _), tally in groups.items():
        for screening_id, member in tally.members.items():
            if member.final_ok() and member.final_verdict is not None:
                finals[screening_id][role] = member.final_verdict
    both = [
        (v[Role.TRANSLATOR.value], v[Role.JUDGE.value])
        for v in finals.values()
        if Role.TRANSLATOR.value in v and Role.JUDGE.value in v
    ]
    return Agreement(screenings=len(both), kappa=cohens_kappa(both))


def human_rates(screenings: Iterable[ScreeningRow]) -> HumanRates:
    decided = [s for s in screenings if s.final_decision is not None]
    flagged = [s for s in decided if s.outcome == Outcome.FLAGGED.value]
    passed = [s for s in decided if s.outcome == Outcome.PASSED.value and s.audit]
    return HumanRates(
        flagged_precision=Rate.of(sum(s.final_decision == MISMATCH for s in flagged), len(flagged)),
        false_pass=Rate.of(sum(s.final_decision == MISMATCH for s in passed), len(passed)),
    )
