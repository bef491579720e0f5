"""What a re-scoring run would change (or changed): counts by transition and reason. Pure.

Each screening in scope is compared with its current state (the outcome and reasons on the
screening row, and the current reading of each stored review). A screening whose outcome or
reasons would move is *changed*; one whose outcome stays but whose readings or ruling come
under new versions is *restamped* (applying writes both, so that every screening in scope
ends under the current versions). A difference that comes with no new version -- a reading
that differs under the parser version it was read with, or an outcome that moves while
parser, policy and evidence versions all stay -- is *unversioned*: code changed without its
version. It is reported and never applied, since the rows it would write could not be told
apart from the ones they replace.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.calibration.tally import Matrix
from app.contract.reading import Reading
from app.pipeline.ruling import ScreeningRuling
from app.repositories.rescore_rows import CurrentState

# Beyond this many, `changed_ids` over the API is cut short (the CLI writes all to a file).
MAX_LISTED_IDS = 10_000


@dataclass(frozen=True, slots=True)
class Change:
    current: CurrentState
    ruling: ScreeningRuling
    # The parser version(s) of the readings before, and of the replayed ones.
    parser_version_before: str
    parser_version: str
    # review id -> (reading now, reading replayed), for readings that differ in content or
    # in parser version (all are written when the change is applied).
    readings: Mapping[int, tuple[Reading, Reading]]
    # The outcome or its reasons move; otherwise only the versions (or reading texts) do.
    moved: bool
    unversioned: bool

    @property
    def transition(self) -> str:
        return f"{self.current.outcome} -> {self.ruling.ruling.outcome.value}"


def reading_label(reading: Reading) -> str:
    """`ok/faithful`, `invalid/unclear`...: status first, it says why."""
    return f"{reading.parse_status.value}/{reading.verdict.value}"


def readings_differ(before: Reading, after: Reading) -> bool:
    return (before.verdict, before.parse_status, before.back_translation, before.issues) != (
        after.verdict,
        after.parse_status,
        after.back_translation,
        after.issues,
    )


def parser_versions(readings: Iterable[Reading]) -> str:
    """The parser version of a set of readings; comma-joined when they differ."""
    return ",".join(sorted({r.parser_version for r in readings}))


def compare(
    current: CurrentState,
    ruling: ScreeningRuling,
    before: Mapping[int, Reading],
    after: Mapping[int, Reading],
    lean: tuple[str | None, str] | None = None,
) -> Change | None:
    """What replaying this screening changes: None when nothing does (same outcome and
    reasons, same readings, same versions), else a Change (`moved` when the outcome or its
    reasons do; otherwise only versions, or reading texts, are new). `lean`: the reader
    versions of its stored Lean check, as stored and as read again now; a move that only a
    newer Lean reader explains is versioned, and its ruling names that reader."""
    new = ruling.ruling
    moved = (new.outcome, new.reasons) != (current.outcome, current.reasons)
    differing = {
        review_id: (before[review_id], reading)
        for review_id, reading in after.items()
        if readings_differ(before[review_id], reading)
        or before[review_id].parser_version != reading.parser_version
    }
    reread = any(old.parser_version != new_.parser_version for old, new_ in differing.values())
    reread = reread or (lean is not None and lean[0] != lean[1])
    decided_anew = (new.policy_version, ruling.evidence_version) != (
        current.policy_version,
        current.evidence_version,
    )
    if not moved and not differing and not decided_anew:
        return None
    # A reading that differs under the parser version it was read with, or an outcome that
    # moves with no version new, comes from code changed without its version.
    unversioned = any(
        old.parser_version == new_.parser_version for old, new_ in differing.values()
    ) or (moved and not reread and not decided_anew)
    return Change(
        current,
        ruling,
        _with_reader(parser_versions(before.values()), None if lean is None else lean[0]),
        _with_reader(parser_versions(after.values()), None if lean is None else lean[1]),
        differing,
        moved=moved,
        unversioned=unversioned,
    )


def _with_reader(versions: str, reader: str | None) -> str:
    """The versions a ruling was decided under, with its Lean check's reader among them."""
    named = {*versions.split(","), reader or ""}
    return ",".join(sorted(named - {""}))


@dataclass
class Diff:
    """Running totals over a re-scoring run."""

    parser_version: str
    policy_version: str
    evidence_version: str
    considered: int = 0
    unchanged: int = 0
    changed: int = 0
    # Outcome unchanged, decided again under new versions (written as such when applied).
    restamped: int = 0
    unversioned: int = 0
    # The plan needed a call that was never made; decided without it (never a pass).
    incomplete: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    transitions: Counter[str] = field(default_factory=Counter)
    # transition -> "+reason" / "-reason" -> count: why each kind of move happened.
    by_transition: dict[str, Counter[str]] = field(default_factory=dict)
    reasons_added: Counter[str] = field(default_factory=Counter)
    reasons_removed: Counter[str] = field(default_factory=Counter)
    readings: Counter[str] = field(default_factory=Counter)
    # reader version -> stored replies it read again (contract-4 for text and grammar,
    # tool-1, json-1): `parser_version` is the contract parser's alone.
    readers: Counter[str] = field(default_factory=Counter)
    changed_ids: list[str] = field(default_factory=list)
    # Written by an applied run: screenings whose outcome moved, and restamped ones.
    applied: int = 0
    restamps_applied: int = 0
    # Changed by someone else between reading and writing: left for the next run.
    raced: int = 0
    # Labelled screenings by their outcome now and as replayed: a change judged on labels.
    calibration_before: Matrix = field(default_factory=Matrix)
    calibration_after: Matrix = field(default_factory=Matrix)

    def skip(self, current: CurrentState, cause: str) -> None:
        self.considered += 1
        self.skipped[cause] += 1
        self.calibrate(current, current.outcome)

    def calibrate(self, current: CurrentState, outcome: str) -> None:
        """Count a labelled screening under its current outcome and `outcome` after."""
        if current.label is not None:
            self.calibration_before.add(current.label, current.outcome)
            self.calibration_after.add(current.label, outcome)

    def add(self, change: Change | None, *, incomplete: bool) -> None:
        self.considered += 1
        self.incomplete += incomplete
        self.unversioned += change is not None and change.unversioned
        if change is None or not change.moved:
            self.unchanged += 1
            self.restamped += change is not None and not change.unversioned
            return
        self.changed += 1
        self.transitions[change.transition] += 1
        before, after = set(change.current.reasons), set(change.ruling.ruling.reasons)
        self.reasons_added.update(after - before)
        self.reasons_removed.update(before - after)
        why = self.by_transition.setdefault(change.transition, Counter())
        why.update([f"+{reason}" for reason in after - before])
        why.update([f"-{reason}" for reason in before - after])
        self.readings.update(
            f"{reading_label(old)} -> {reading_label(new)}"
            for old, new in change.readings.values()
            if reading_label(old) != reading_label(new)
        )
        self.changed_ids.append(change.current.screening_id)

    def as_json(self, *, max_ids: int | None = None) -> dict[str, Any]:
        ids: Sequence[str] = self.changed_ids
        return {
            "versions": {
                "parser": self.parser_version,
                "policy": self.policy_version,
                "evidence": self.evidence_version,
            },
            "readers": dict(sorted(self.readers.items())),
            "considered": self.considered,
            "unchanged": self.unchanged,
            "changed": self.changed,
            "restamped": self.restamped,
            "unversioned": self.unversioned,
            "incomplete": self.incomplete,
            "skipped": dict(sorted(self.skipped.items())),
            "transitions": _by_count(self.transitions),
            "by_transition": {
                move: _by_count(self.by_transition[move]) for move in _by_count(self.transitions)
            },
            "reasons_added": _by_count(self.reasons_added),
            "reasons_removed": _by_count(self.reasons_removed),
            "readings": _by_count(self.readings),
            "applied": self.applied,
            "restamps_applied": self.restamps_applied,
            "raced": self.raced,
            "changed_ids": list(ids if max_ids is None else ids[:max_ids]),
            "changed_ids_truncated": max_ids is not None and len(ids) > max_ids,
            "calibration": {
                "before": self.calibration_before.as_json(),
                "after": self.calibration_after.as_json(),
            },
        }


def _by_count(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
