"""Per judge, and between a panel's judges: the report's `judges` and `panel_agreement`
sections, folded from the reviews one at a time like the rest of the summary (pure).

`judges`: for each judge name (`judge` for the single judge), its calls' final readings
(parse statuses, the model's UNCLEAR apart from unreadable replies), tokens and latency
p50/p95 over the calls that reached a provider, whatever model each call used.

`panel_agreement`: over the panel screenings (those whose judges are named, not the single
`judge`) in which the translator and every judge have an `ok` final reading: Fleiss' kappa
of their verdicts (the translator and the judges are the raters; a screening's raters may
number differently from another's, as the kappa allows), and Cohen's kappa for each pair
of judges over the screenings both read `ok` (`"a/b"`, names in order).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Protocol

from app.reports.stats import LatencyHistogram, cohens_kappa
from app.vocabulary import SINGLE_JUDGE, ParseStatus, Purpose, Role

READING_PURPOSES = frozenset({Purpose.REVIEW, Purpose.FORMAT_RETRY})
TOKEN_KINDS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")
TRANSLATOR = Role.TRANSLATOR
OK = ParseStatus.OK
Readings = Callable[[Iterable[tuple[str, str]]], dict[str, int]]


class PanelReview(Protocol):
    """What these sections read of a stored review (summary.ReviewRow has it)."""

    @property
    def screening_id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def judge_name(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def purpose(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def verdict(self) -> str: ...
    @property
    def parse_status(self) -> str: ...
    @property
    def usage(self) -> Mapping[str, Any]: ...
    @property
    def supplied(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class JudgeReport:
    judge: str
    models: list[str]
    screenings: int
    calls: int
    readings: dict[str, int]
    tokens: dict[str, int]
    tokens_per_screening: dict[str, float | None]
    timed_calls: int
    latency_p50_ms: float | None
    latency_p95_ms: float | None


@dataclass(frozen=True, slots=True)
class PanelAgreement:
    n: int
    fleiss_kappa: float | None
    pairs: dict[str, float | None]


@dataclass(slots=True)
class _Final:
    """One screening's last reading call of one rater (translator, or a judge)."""

    attempt: int = 0
    verdict: str | None = None
    status: str | None = None

    def add(self, review: PanelReview) -> None:
        if review.purpose in READING_PURPOSES and (
            self.status is None or review.attempt > self.attempt
        ):
            self.attempt, self.verdict, self.status = (
                review.attempt,
                review.verdict,
                review.parse_status,
            )


@dataclass(slots=True)
class _JudgeTally:
    finals: dict[str, _Final] = field(default_factory=dict)
    models: dict[str, None] = field(default_factory=dict)
    calls: int = 0
    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOKEN_KINDS, 0))
    latency: LatencyHistogram = field(default_factory=LatencyHistogram)


class PanelTally:
    """Fold reviews in with `add` (timed: whether the call's latency is a provider's, as
    the summary decides it); `judges()` and `agreement()` are the sections."""

    def __init__(self) -> None:
        self._judges: dict[str, _JudgeTally] = defaultdict(_JudgeTally)
        self._translator: dict[str, _Final] = defaultdict(_Final)

    def add(self, review: PanelReview, latency_ms: int | None) -> None:
        if review.role == TRANSLATOR:
            self._translator[review.screening_id].add(review)
            return
        tally = self._judges[review.judge_name or SINGLE_JUDGE]
        tally.finals.setdefault(review.screening_id, _Final()).add(review)
        tally.models["supplied" if review.supplied else review.model or "unknown"] = None
        tally.calls += 1
        if latency_ms is not None:
            tally.latency.add(latency_ms)
        for kind in TOKEN_KINDS:
            value = review.usage.get(kind)
            tally.tokens[kind] += value if isinstance(value, int) else 0

    def judges(self, readings: Readings) -> list[JudgeReport]:
        """`readings`: final (parse status, verdict) pairs -> counts, as the groups show them."""
        return [_report(name, self._judges[name], readings) for name in sorted(self._judges)]

    def agreement(self) -> PanelAgreement:
        verdicts = self._panel_verdicts()
        subjects = [
            Counter(x for x in v.values() if x is not None)
            for v in verdicts.values()
            if all(x is not None for x in v.values())
        ]
        names = sorted({n for v in verdicts.values() for n in v if n != TRANSLATOR})
        pairs = {
            f"{a}/{b}": cohens_kappa(
                (v[a], v[b]) for v in verdicts.values() if v.get(a) and v.get(b)
            )
            for a, b in combinations(names, 2)
        }
        return PanelAgreement(len(subjects), fleiss_kappa(subjects), pairs)

    def _panel_verdicts(self) -> dict[str, dict[str, str | None]]:
        """Per panel screening, each rater's `ok` final verdict (None when not ok)."""
        found: dict[str, dict[str, str | None]] = defaultdict(dict)
        for name, tally in self._judges.items():
            if name == SINGLE_JUDGE:
                continue
            for screening_id, final in tally.finals.items():
                found[screening_id][name] = _ok_verdict(final)
        for screening_id, raters in found.items():
            translator = self._translator.get(screening_id)
            raters[TRANSLATOR] = _ok_verdict(translator) if translator else None
        return found


def _ok_verdict(final: _Final) -> str | None:
    return final.verdict if final.status == OK else None


def fleiss_kappa(subjects: Sequence[Counter[str]]) -> float | None:
    """Fleiss' kappa over subjects, each the count of raters per category (at least two
    raters each). None with no subject, or when chance agreement is certain."""
    rated = [s for s in subjects if sum(s.values()) >= 2]
    if not rated:
        return None
    totals: Counter[str] = Counter()
    agreement = 0.0
    for subject in rated:
        n = sum(subject.values())
        totals.update(subject)
        agreement += (sum(c * c for c in subject.values()) - n) / (n * (n - 1))
    observed = agreement / len(rated)
    ratings = sum(totals.values())
    expected = sum((c / ratings) ** 2 for c in totals.values())
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def _report(name: str, tally: _JudgeTally, readings: Readings) -> JudgeReport:
    screenings = len(tally.finals)
    finals = ((f.status, f.verdict) for f in tally.finals.values() if f.status and f.verdict)
    per = {k: (v / screenings if screenings else None) for k, v in tally.tokens.items()}
    return JudgeReport(
        judge=name,
        models=list(tally.models),
        screenings=screenings,
        calls=tally.calls,
        readings=readings(finals),
        tokens=dict(tally.tokens),
        tokens_per_screening=per,
        timed_calls=tally.latency.count,
        latency_p50_ms=tally.latency.quantile(0.5),
        latency_p95_ms=tally.latency.quantile(0.95),
    )
