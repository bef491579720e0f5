"""Progress while a batch is worked: done/total, outcomes so far, rate and ETA.

On a terminal one line is redrawn in place (carriage return, no other control codes). Not
on a terminal (a pipeline's log, CI), plain lines are written: the first, one every
`plain_every_seconds`, and the last, so a log shows progress without being flooded.
Progress goes to stderr: stdout may carry the results.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TextIO

from app.cli.terminal import shown
from app.vocabulary import Outcome

BAR_WIDTH = 24
# Outcomes in this order, then any other name the server reports.
OUTCOME_ORDER = tuple(outcome.value for outcome in Outcome)


@dataclass(frozen=True, slots=True)
class Snapshot:
    done: int
    total: int
    outcomes: Mapping[str, int]


def describe(snapshot: Snapshot, rate: float | None) -> str:
    """`120/2000 (6.0%) | passed 100, flagged 15, needs_review 5 | 12.3/s | ETA 2m33s`"""
    share = snapshot.done / snapshot.total if snapshot.total else 1.0
    parts = [f"{snapshot.done}/{snapshot.total} ({share:.1%})", _outcomes(snapshot.outcomes)]
    if rate is not None:
        parts.append(f"{rate:.1f}/s")
        remaining = snapshot.total - snapshot.done
        parts.append(f"ETA {format_duration(remaining / rate)}" if rate > 0 else "ETA ?")
    return " | ".join(parts)


def bar(snapshot: Snapshot, width: int = BAR_WIDTH) -> str:
    share = min(snapshot.done / snapshot.total, 1.0) if snapshot.total else 1.0
    filled = round(share * width)
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def format_duration(seconds: float) -> str:
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _outcomes(outcomes: Mapping[str, int]) -> str:
    names = [*OUTCOME_ORDER, *sorted(set(outcomes) - set(OUTCOME_ORDER))]
    return ", ".join(f"{name} {outcomes.get(name, 0)}" for name in names)


class ProgressReport:
    """Feed it snapshots with `update`; call `finish` once at the end."""

    def __init__(
        self,
        stream: TextIO,
        *,
        label: str,
        live: bool | None = None,
        plain_every_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream
        self._label = label
        self._live = stream.isatty() if live is None else live
        self._every = plain_every_seconds
        self._clock = clock
        self._start: tuple[float, int] | None = None  # (time, done) at the first update
        self._last_line = ""
        self._written = ""  # the last plain line written
        self._last_written_at: float | None = None
        self._drawn_width = 0

    def update(self, snapshot: Snapshot) -> None:
        now = self._clock()
        line = self._line(snapshot, now)
        if self._live:
            self._redraw(line)
        elif self._last_written_at is None or now - self._last_written_at >= self._every:
            self._write_plain(line, now)
        self._last_line = line

    def finish(self) -> None:
        """End the live line, or write the last state if the log has not seen it."""
        if self._live:
            self._stream.write("\n")
        elif self._last_line and self._last_line != self._written:
            self._write_plain(self._last_line, self._clock())
        self._stream.flush()

    def rate(self, snapshot: Snapshot, now: float) -> float | None:
        """Items finished per second since the first update (None until time has passed)."""
        if self._start is None:
            self._start = (now, snapshot.done)
        started_at, done_at_start = self._start
        elapsed = now - started_at
        return (snapshot.done - done_at_start) / elapsed if elapsed > 0 else None

    def _line(self, snapshot: Snapshot, now: float) -> str:
        # The label (a file name, a batch id) and the outcome names came from outside.
        text = shown(f"{self._label}: {describe(snapshot, self.rate(snapshot, now))}")
        return f"{bar(snapshot)} {text}" if self._live else text

    def _redraw(self, line: str) -> None:
        # Spaces over the rest of a longer previous line: no terminal control codes needed.
        padding = " " * max(0, self._drawn_width - len(line))
        self._stream.write("\r" + line + padding)
        self._stream.flush()
        self._drawn_width = len(line)

    def _write_plain(self, line: str, now: float) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()
        self._written = line
        self._last_written_at = now
