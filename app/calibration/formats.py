"""The reply-format study: the same labelled pairs screened once per reply format, counted
per seat (the translator, the judge, each panel judge) and format (pure).

For each format, one batch screened every pair with every role asked in that format. Per
seat × format it counts, over the labelled pairs the seat was asked about:
- `readable`: the pairs whose seat had an `ok` reply within its first 1, 2, 3 attempts
  (its review and its format retries, in the order made; confirmations are repeats of an
  answer already read, not attempts);
- `failures`: every reply not read `ok`, by its stored parse status (the cause: `truncated`
  is a reply cut off, `refused` a refusal, `provider_error` a failed call, and the
  structured formats' own statuses as their readers store them);
- `preamble` (`text` only): replies with text before their first contract field line,
  over the replies that have one;
- `false_pass` and `false_alarm` of the seat's own verdict (app/calibration/judges.py's:
  its first `ok` reading): FAITHFUL on a mismatch pair over mismatch pairs, anything but
  FAITHFUL (an unreadable reply included) on a faithful pair over faithful pairs. Intervals
  are over pairs, never replies;
- tokens, over every call it made.
Across formats, `agreement`: per seat and two formats, the pairs on which both own verdicts
were read and are the same, over the pairs both read. The screen itself (outcomes, with the
policy and the evidence checks) is each format's calibration matrix (tally.Matrix).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from app.calibration.judges import own_verdict
from app.calibration.tally import Call, LabelledScreening, Matrix, rate_json
from app.contract.parser import HORIZONTAL_WHITESPACE
from app.reports.stats import Rate
from app.vocabulary import Label, ParseStatus, Purpose, Verdict

# Attempts the study counts readability after (the runs ask up to the most of these).
ATTEMPTS = (1, 2, 3)
TEXT = "text"
# A contract field line (parser.py rules 1 and 2): at the start of the reply or after LF,
# optional horizontal whitespace, a field name in any ASCII letter case, a colon.
FIELD_LINE = re.compile(
    r"(?:\A|\n)[" + re.escape(HORIZONTAL_WHITESPACE) + r"]*+"
    r"(?:verdict|back-translation|issues):",
    re.IGNORECASE | re.ASCII,
)
# What each stored parse status says about the mechanism, for the reports.
CAUSES = {
    ParseStatus.MISSING: "no verdict field",
    ParseStatus.INVALID: "a verdict outside the enum",
    ParseStatus.CONFLICTING: "verdicts that disagree",
    ParseStatus.BARE_CR: "a bare carriage return",
    ParseStatus.AMBIGUOUS: "read otherwise leniently",
    ParseStatus.TRUNCATED: "cut off",
    ParseStatus.EMPTY: "empty reply",
    ParseStatus.PROVIDER_ERROR: "the call failed",
    ParseStatus.REFUSED: "refused",
}


def has_preamble(reply: str | None) -> bool | None:
    """True when `reply` has text before its first contract field line; None when it has
    no field line at all (nothing to precede) or no text."""
    if not reply:
        return None
    found = FIELD_LINE.search(reply)
    if found is None:
        return None
    return bool(reply[: found.start()].strip())


@dataclass(frozen=True, slots=True)
class StudiedScreening:
    """One labelled screening of a format's batch: its pair, and each stored call with
    its reply text in the same order as `screening.calls`."""

    pair_id: str
    screening: LabelledScreening
    replies: Sequence[str | None]


@dataclass(slots=True)
class SeatTally:
    """One seat under one format, over the labelled pairs it was asked about."""

    models: dict[str, None] = field(default_factory=dict)  # an ordered set
    pairs: int = 0
    readable: Counter[int] = field(default_factory=Counter)  # attempts -> pairs `ok` within
    failures: Counter[str] = field(default_factory=Counter)
    replies: int = 0
    with_field: int = 0
    preambles: int = 0
    mismatch_pairs: int = 0
    false_passes: int = 0
    faithful_pairs: int = 0
    false_alarms: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    verdicts: dict[str, str] = field(default_factory=dict)  # pair id -> its own verdict

    def add(self, pair_id: str, label: str, calls: Sequence[tuple[Call, str | None]]) -> None:
        self.pairs += 1
        asked = [c for c, _ in calls if c.purpose != Purpose.CONFIRMATION]
        for attempts in ATTEMPTS:
            self.readable[attempts] += any(
                c.parse_status == ParseStatus.OK for c in asked[:attempts]
            )
        verdict = own_verdict([c for c, _ in calls])
        if verdict is not None:
            self.verdicts[pair_id] = verdict
        if label == Label.MISMATCH:
            self.mismatch_pairs += 1
            self.false_passes += verdict == Verdict.FAITHFUL
        else:
            self.faithful_pairs += 1
            self.false_alarms += verdict != Verdict.FAITHFUL
        for call, reply in calls:
            self.models["supplied" if call.supplied else call.model or "unknown"] = None
            self.calls += 1
            self.replies += reply is not None
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens
            if call.parse_status != ParseStatus.OK:
                self.failures[call.parse_status or "unknown"] += 1
            preamble = has_preamble(reply)
            if preamble is not None:
                self.with_field += 1
                self.preambles += preamble

    def as_json(self, reply_format: str) -> dict[str, Any]:
        per = self.pairs or 1
        return {
            "models": list(self.models),
            "pairs": self.pairs,
            "readable": {
                str(n): rate_json(Rate.of(self.readable[n], self.pairs)) for n in ATTEMPTS
            },
            "failures": dict(sorted(self.failures.items())),
            "calls": self.calls,
            "preamble": (
                rate_json(Rate.of(self.preambles, self.with_field))
                if reply_format == TEXT
                else None
            ),
            "false_pass": rate_json(Rate.of(self.false_passes, self.mismatch_pairs)),
            "false_alarm": rate_json(Rate.of(self.false_alarms, self.faithful_pairs)),
            "verdicts": dict(sorted(Counter(self.verdicts.values()).items())),
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_per_pair": (
                (self.prompt_tokens + self.completion_tokens) / per if self.pairs else None
            ),
        }


@dataclass(slots=True)
class FormatTally:
    """One format's batch: the screen's matrix and each seat's tally."""

    reply_format: str
    batch_id: str | None = None
    refused: str | None = None  # the settings' refusal: nothing was screened
    pending: int = 0
    screen: Matrix = field(default_factory=Matrix)
    seats: dict[str, SeatTally] = field(default_factory=dict)

    def add(self, studied: StudiedScreening) -> None:
        screening = studied.screening
        if screening.outcome is None:
            self.pending += 1
            return
        self.screen.add(screening.label, screening.outcome)
        by_seat: dict[str, list[tuple[Call, str | None]]] = {}
        for call, reply in zip(screening.calls, studied.replies, strict=True):
            by_seat.setdefault(call.seat, []).append((call, reply))
        for seat, calls in by_seat.items():
            tally = self.seats.setdefault(seat, SeatTally())
            tally.add(studied.pair_id, screening.label, calls)

    def as_json(self) -> dict[str, Any]:
        return {
            "format": self.reply_format,
            "batch_id": self.batch_id,
            "refused": self.refused,
            "pending": self.pending,
            "screen": self.screen.as_json() if self.refused is None else None,
            "seats": {
                seat: self.seats[seat].as_json(self.reply_format)
                for seat in sorted(self.seats, key=_seat_order)
            },
        }


def _seat_order(seat: str) -> tuple[bool, str]:
    """The translator first, then the judges by name."""
    return seat != "translator", seat


def agreement(tallies: Sequence[FormatTally]) -> dict[str, list[dict[str, Any]]]:
    """Per seat, per two formats that both screened it: same own verdict / both read."""
    found: dict[str, list[dict[str, Any]]] = {}
    seats = sorted({seat for tally in tallies for seat in tally.seats}, key=_seat_order)
    for seat in seats:
        for a, b in combinations([t for t in tallies if seat in t.seats], 2):
            first, second = a.seats[seat].verdicts, b.seats[seat].verdicts
            both = first.keys() & second.keys()
            same = sum(first[pair] == second[pair] for pair in both)
            rate = rate_json(Rate.of(same, len(both)))
            found.setdefault(seat, []).append({"a": a.reply_format, "b": b.reply_format, **rate})
    return found


def study_json(tallies: Sequence[FormatTally], *, pairs: int, attempts: int) -> dict[str, Any]:
    """The study object `eval formats --json` prints."""
    formats = [tally.as_json() for tally in tallies]
    for part in formats:  # readability after an attempt never made is not a measurement
        for seat in part["seats"].values():
            seat["readable"] = {n: r for n, r in seat["readable"].items() if int(n) <= attempts}
    return {
        "pairs": pairs,
        "attempts": attempts,
        "formats": formats,
        "agreement": agreement(tallies),
        "causes": {str(status): cause for status, cause in CAUSES.items()},
    }


def cause_text(status: str, causes: Mapping[str, str]) -> str:
    """`truncated (cut off)`, or the status alone when it has no description."""
    cause = causes.get(status)
    return f"{status} ({cause})" if cause else status
