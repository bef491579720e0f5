"""The summary report, built from stored rows (pure: rows in, report out).

A *role-screening* is one screening's calls for one role; its *final reading* is its last
review or format-retry call (confirmations are second opinions, not readings).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.reports.stats import Rate, cohens_kappa, percentile
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
    if review.parse_status == ParseStatus.OK.value:
        return "model_unclear" if review.verdict == Verdict.UNCLEAR.value else "ok"
    return "unreadable" if review.parse_status in UNREADABLE else review.parse_status


@dataclass
class _RoleScreening:
    calls: list[ReviewRow] = field(default_factory=list)

    def final(self) -> ReviewRow | None:
        readings = [r for r in self.calls if r.purpose in READING_PURPOSES]
        return max(readings, key=lambda r: r.attempt) if readings else None

    def retried(self) -> bool:
        return any(r.purpose == Purpose.FORMAT_RETRY.value for r in self.calls)

    def recovered(self) -> bool:
        final = self.final()
        return self.retried() and final is not None and final.parse_status == ParseStatus.OK.value


GroupKey = tuple[str, str | None, str | None]


def summarize(screenings: Iterable[ScreeningRow], reviews: Iterable[ReviewRow]) -> Summary:
    by_id = {s.id: s for s in screenings}
    groups: dict[GroupKey, dict[str, _RoleScreening]] = defaultdict(dict)
    for review in reviews:
        key = (review.role, review.model, review.prompt_version)
        groups[key].setdefault(review.screening_id, _RoleScreening()).calls.append(review)
    return Summary(
        screenings=len(by_id),
        outcomes=_outcomes(by_id.values()),
        reasons=dict(sorted(Counter(r for s in by_id.values() for r in s.reasons).items())),
        groups=[_group(key, members, by_id) for key, members in sorted(groups.items(), key=_order)],
        agreement=_agreement(groups),
        human=human_rates(by_id.values()),
    )


def _order(item: tuple[GroupKey, object]) -> tuple[str, str, str]:
    role, model, version = item[0]
    return role, model or "", version or ""


def _outcomes(screenings: Iterable[ScreeningRow]) -> dict[str, int]:
    counts = Counter(s.outcome for s in screenings if s.outcome is not None)
    return {outcome.value: counts[outcome.value] for outcome in Outcome}


def _group(
    key: GroupKey, members: Mapping[str, _RoleScreening], by_id: Mapping[str, ScreeningRow]
) -> GroupReport:
    calls = [r for member in members.values() for r in member.calls]
    finals = [f for member in members.values() if (f := member.final()) is not None]
    retried = [m for m in members.values() if m.retried()]
    latencies = [r.latency_ms for r in calls if r.latency_ms is not None]
    truncated = sum(1 for r in calls if r.parse_status == ParseStatus.TRUNCATED.value)
    return GroupReport(
        role=key[0],
        model=key[1],
        prompt_version=key[2],
        screenings=len(members),
        calls=len(calls),
        readings=_readings(finals),
        format_retry=Rate.of(len(retried), len(members)),
        retry_recovered=Rate.of(sum(1 for m in retried if m.recovered()), len(retried)),
        truncation=Rate.of(truncated, len(calls)),
        tokens=_tokens(calls),
        latency_p50_ms=percentile(latencies, 0.5),
        latency_p95_ms=percentile(latencies, 0.95),
        human=human_rates(by_id[i] for i in members if i in by_id),
    )


def _readings(finals: Iterable[ReviewRow]) -> dict[str, int]:
    counts = Counter(reading_of(r) for r in finals)
    return {reading: counts[reading] for reading in READINGS}


def _tokens(calls: Iterable[ReviewRow]) -> dict[str, int]:
    totals = dict.fromkeys(TOKEN_KINDS, 0)
    for call in calls:
        for kind in TOKEN_KINDS:
            value = call.usage.get(kind)
            # Providers omit counts or send null; a missing count adds nothing.
            totals[kind] += value if isinstance(value, int) else 0
    return totals


def _agreement(groups: Mapping[GroupKey, Mapping[str, _RoleScreening]]) -> Agreement:
    finals: dict[str, dict[str, str]] = defaultdict(dict)
    for (role, _, _), members in groups.items():
        for screening_id, member in members.items():
            final = member.final()
            if final is not None and final.parse_status == ParseStatus.OK.value:
                finals[screening_id][role] = final.verdict
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
