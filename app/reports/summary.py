"""The summary report, built from stored rows (pure: rows in, report out).

A *role-screening* is one screening's calls for one role; its *final reading* is its last
review or format-retry call (confirmations are second opinions, not readings). Reviews are
folded in one at a time (ReviewTally), so they can be streamed from the database: no list
of calls is held, and latency quantiles come from a bounded histogram (stats.py: exact
below 10 s, within 0.5% above). Only calls that reached a provider are timed: a supplied
reply was never a call, and a call never sent (no provider configured) is recorded with a
placeholder 0 ms that is no latency.

What the database counts itself (the queue backlog, outcomes by tag, screenings per day)
comes in as `Aggregates`; the queue's decisions are folded from the screening rows.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from app.reports.lean import LeanSaving, lean_saving
from app.reports.panel import JudgeReport, PanelAgreement, PanelTally
from app.reports.queue import Resolutions, ResolutionTally
from app.reports.reasons import counted_reasons
from app.reports.reviewers import DefectCounts, PeopleMeasures, ReviewerAgreement
from app.reports.stats import LatencyHistogram, Rate, cohens_kappa
from app.repositories.report_rows import (
    NO_BACKLOG,
    Backlog,
    DayCount,
    ReviewRow,
    ScreeningRow,
    TagCounts,
)
from app.vocabulary import SINGLE_JUDGE, Outcome, ParseStatus, Purpose, Role, Verdict

# Readings the model gave and meant (ok) kept apart from the model saying "unclear", and
# both apart from replies nobody could read.
READINGS = ("ok", "model_unclear", "unreadable", "truncated", "empty", "provider_error", "refused")
UNREADABLE = frozenset({"missing", "invalid", "conflicting", "bare_cr", "ambiguous"})
READING_PURPOSES = frozenset({Purpose.REVIEW, Purpose.FORMAT_RETRY})
TOKEN_KINDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
MISMATCH = Verdict.MISMATCH
NEEDS_REVIEW = Outcome.NEEDS_REVIEW


class StoredCall(Protocol):
    """What tells whether a stored call's latency is a provider's (a ReviewRow, a
    calibration Call)."""

    @property
    def supplied(self) -> bool: ...
    @property
    def http_status(self) -> int | None: ...
    @property
    def latency_ms(self) -> int | None: ...


def never_sent(review: StoredCall) -> bool:
    """The call reached no provider (none configured: `CallResult.not_sent`). Such a call is
    stored with no HTTP status and 0 ms, a placeholder and not a latency. A call that was
    sent took time (a failed one, its attempts and the waits between them) or got a status."""
    return not review.supplied and review.http_status is None and review.latency_ms == 0


def timed(review: StoredCall) -> bool:
    """The call's latency is a provider's: it was sent, and not a supplied reply."""
    return review.latency_ms is not None and not review.supplied and not never_sent(review)


@dataclass(frozen=True, slots=True)
class HumanRates:
    """Against people's final decisions: how often `flagged` was right, and how often an
    audited `passed` was in fact a mismatch."""

    flagged_precision: Rate
    false_pass: Rate


@dataclass(frozen=True, slots=True)
class GroupReport:
    """One role x model x prompt version; supplied replies (no model, no prompt version)
    are a group of their own, `supplied`."""

    role: str
    model: str | None
    prompt_version: str | None
    supplied: bool
    screenings: int
    calls: int
    readings: dict[str, int]
    format_retry: Rate
    retry_recovered: Rate
    truncation: Rate
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None]
    timed_calls: int
    calls_not_sent: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    human: HumanRates


@dataclass(frozen=True, slots=True)
class Agreement:
    """Translator vs judge over screenings where both final readings are status ok."""

    screenings: int
    kappa: float | None


@dataclass(frozen=True, slots=True)
class Aggregates:
    """What the database counts for a report beside the rows it streams."""

    backlog: Backlog = NO_BACKLOG
    tags: TagCounts = field(default_factory=TagCounts)
    days: list[DayCount] = field(default_factory=list)
    # Agreement between people, defects named, pairs decided both ways (reviewers.py).
    people: PeopleMeasures = field(default_factory=PeopleMeasures)


@dataclass(frozen=True, slots=True)
class Summary:
    screenings: int
    outcomes: dict[str, int]
    # Counted by `counted_reasons`: a bare evidence reason only where no code refines it.
    reasons: dict[str, int]
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None]
    groups: list[GroupReport]
    agreement: Agreement
    human: HumanRates
    resolutions: Resolutions
    backlog: Backlog
    tags: TagCounts
    days: list[DayCount]
    reviewer_agreement: ReviewerAgreement
    defects: DefectCounts
    conflicts: int
    # Per judge, and between a panel's judges (panel.py).
    judges: list[JudgeReport] = field(default_factory=list)
    panel_agreement: PanelAgreement = field(default_factory=lambda: PanelAgreement(0, None, {}))
    # Screenings a Lean check stopped before any model (reports/lean.py); None: none did.
    lean: LeanSaving | None = None


def reading_of(review: ReviewRow) -> str:
    return reading_from(review.parse_status, review.verdict)


def reading_from(parse_status: str, verdict: str) -> str:
    if parse_status == ParseStatus.OK:
        return "model_unclear" if verdict == Verdict.UNCLEAR else "ok"
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
        self.retried = self.retried or review.purpose == Purpose.FORMAT_RETRY
        later = self.final_status is None or review.attempt > self.final_attempt
        if review.purpose in READING_PURPOSES and later:
            self.final_attempt = review.attempt
            self.final_verdict, self.final_status = review.verdict, review.parse_status

    def final_ok(self) -> bool:
        return self.final_status == ParseStatus.OK

    def reading(self) -> str | None:
        if self.final_status is None or self.final_verdict is None:
            return None
        return reading_from(self.final_status, self.final_verdict)


@dataclass(slots=True)
class _GroupTally:
    """One role x model x prompt version (or supplied replies): counters, a bounded
    histogram of timed latencies, and one _RoleScreening per screening (the calls
    themselves are not kept)."""

    members: dict[tuple[str, str], _RoleScreening] = field(default_factory=dict)
    calls: int = 0
    not_sent: int = 0
    truncated: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)

    def add(self, review: ReviewRow) -> None:
        # A panel's judges on one model are each a member of their own in a screening.
        member = (review.screening_id, review.judge_name)
        self.members.setdefault(member, _RoleScreening()).add(review)
        self.calls += 1
        self.not_sent += never_sent(review)
        self.truncated += review.parse_status == ParseStatus.TRUNCATED
        if review.latency_ms is not None and timed(review):
            self.latency.add(review.latency_ms)
        for kind in TOKEN_KINDS:
            value = review.usage.get(kind)
            # Providers omit counts or send null; a missing count adds nothing.
            self.tokens[kind] += value if isinstance(value, int) else 0


# role, supplied, model, prompt version: the order groups are listed in.
GroupKey = tuple[str, bool, str | None, str | None]


class ReviewTally:
    """The summary built from reviews folded in one at a time (`add`), so a caller can
    stream them: memory grows with screenings x roles, never with calls."""

    def __init__(self) -> None:
        self._groups: dict[GroupKey, _GroupTally] = defaultdict(_GroupTally)
        self._panel = PanelTally()

    def add(self, review: ReviewRow) -> None:
        key = (review.role, review.supplied, review.model, review.prompt_version)
        self._groups[key].add(review)
        self._panel.add(review, review.latency_ms if timed(review) else None)

    def summary(
        self, screenings: Iterable[ScreeningRow], counted: Aggregates | None = None
    ) -> Summary:
        by_id = {s.id: s for s in screenings}
        counted = counted or Aggregates()
        groups = [
            _group(key, tally, by_id) for key, tally in sorted(self._groups.items(), key=_order)
        ]
        tokens = {kind: sum(g.tokens[kind] for g in groups) for kind in TOKEN_KINDS}
        return Summary(
            screenings=len(by_id),
            outcomes=_outcomes(by_id.values()),
            reasons=_reasons(by_id.values()),
            lean=lean_saving(by_id.values()) or None,
            tokens=tokens,
            tokens_per_screening=per_screening(tokens, len(by_id)),
            groups=groups,
            agreement=_agreement(self._groups),
            human=human_rates(by_id.values()),
            resolutions=_resolutions(by_id.values()),
            backlog=counted.backlog,
            tags=counted.tags,
            days=counted.days,
            reviewer_agreement=counted.people.reviewer_agreement,
            defects=counted.people.defects,
            conflicts=counted.people.conflicts,
            judges=self._panel.judges(_final_readings),
            panel_agreement=self._panel.agreement(),
        )


def summarize(
    screenings: Iterable[ScreeningRow],
    reviews: Iterable[ReviewRow],
    counted: Aggregates | None = None,
) -> Summary:
    tally = ReviewTally()
    for review in reviews:
        tally.add(review)
    return tally.summary(screenings, counted)


def _order(item: tuple[GroupKey, object]) -> tuple[str, bool, str, str]:
    role, supplied, model, version = item[0]
    return role, supplied, model or "", version or ""


def per_screening(tokens: Mapping[str, int], screenings: int) -> dict[str, float | None]:
    """Mean tokens of each kind per screening; None when there are no screenings."""
    return {kind: count / screenings if screenings else None for kind, count in tokens.items()}


def _reasons(screenings: Iterable[ScreeningRow]) -> dict[str, int]:
    counts = Counter(r for s in screenings for r in counted_reasons(s.reasons))
    return dict(sorted(counts.items()))


def _resolutions(screenings: Iterable[ScreeningRow]) -> Resolutions:
    tally = ResolutionTally()
    for screening in screenings:
        if screening.outcome == NEEDS_REVIEW:
            tally.add(screening.reasons, screening.final_decision)
    return tally.resolutions()


def _outcomes(screenings: Iterable[ScreeningRow]) -> dict[str, int]:
    counts = Counter(s.outcome for s in screenings if s.outcome is not None)
    return {outcome.value: counts[outcome.value] for outcome in Outcome}


def _final_readings(finals: Iterable[tuple[str, str]]) -> dict[str, int]:
    return _readings(reading_from(status, verdict) for status, verdict in finals)


def _group(key: GroupKey, tally: _GroupTally, by_id: Mapping[str, ScreeningRow]) -> GroupReport:
    members = tally.members.values()
    screening_ids = {screening_id for screening_id, _ in tally.members}
    retried = [m for m in members if m.retried]
    role, supplied, model, version = key
    return GroupReport(
        role=role,
        model=model,
        prompt_version=version,
        supplied=supplied,
        screenings=len(screening_ids),
        calls=tally.calls,
        readings=_readings(m.reading() for m in members),
        format_retry=Rate.of(len(retried), len(members)),
        retry_recovered=Rate.of(sum(1 for m in retried if m.final_ok()), len(retried)),
        truncation=Rate.of(tally.truncated, tally.calls),
        tokens=dict(tally.tokens),
        tokens_per_screening=per_screening(tally.tokens, len(members)),
        timed_calls=tally.latency.count,
        calls_not_sent=tally.not_sent,
        latency_p50_ms=tally.latency.quantile(0.5),
        latency_p95_ms=tally.latency.quantile(0.95),
        human=human_rates(by_id[i] for i in screening_ids if i in by_id),
    )


def _readings(readings: Iterable[str | None]) -> dict[str, int]:
    counts = Counter(r for r in readings if r is not None)
    return {reading: counts[reading] for reading in READINGS}


def _agreement(groups: Mapping[GroupKey, _GroupTally]) -> Agreement:
    finals: dict[str, dict[str, str]] = defaultdict(dict)
    for (role, _, _, _), tally in groups.items():
        for (screening_id, judge), member in tally.members.items():
            if role == Role.JUDGE and judge not in ("", SINGLE_JUDGE):
                continue  # a panel's judges: panel_agreement (panel.py)
            if member.final_ok() and member.final_verdict is not None:
                finals[screening_id][role] = member.final_verdict
    both = [
        (v[Role.TRANSLATOR], v[Role.JUDGE])
        for v in finals.values()
        if Role.TRANSLATOR in v and Role.JUDGE in v
    ]
    return Agreement(screenings=len(both), kappa=cohens_kappa(both))


def human_rates(screenings: Iterable[ScreeningRow]) -> HumanRates:
    decided = [s for s in screenings if s.final_decision is not None]
    flagged = [s for s in decided if s.outcome == Outcome.FLAGGED]
    passed = [s for s in decided if s.outcome == Outcome.PASSED and s.audit]
    return HumanRates(
        flagged_precision=Rate.of(sum(s.final_decision == MISMATCH for s in flagged), len(flagged)),
        false_pass=Rate.of(sum(s.final_decision == MISMATCH for s in passed), len(passed)),
    )
