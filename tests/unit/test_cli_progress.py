"""app/cli/progress.py: the progress line, and when it is written (terminal or log)."""

from __future__ import annotations

import io

from app.cli.progress import ProgressReport, Snapshot, bar, describe, format_duration

OUTCOMES = {"passed": 100, "flagged": 15, "needs_review": 5}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def report(tty: bool, every: float = 10.0) -> tuple[ProgressReport, Stream, Clock]:
    stream, clock = Stream(tty), Clock()
    progress = ProgressReport(stream, label="batch b1", plain_every_seconds=every, clock=clock)
    return progress, stream, clock


def test_describe_shows_done_total_outcomes_rate_and_eta() -> None:
    line = describe(Snapshot(120, 2000, OUTCOMES), rate=10.0)
    assert line == ("120/2000 (6.0%) | passed 100, flagged 15, needs_review 5 | 10.0/s | ETA 3m08s")


def test_describe_lists_every_outcome_even_at_zero_and_unknown_ones_after() -> None:
    line = describe(Snapshot(1, 3, {"weird": 1}), rate=None)
    assert line == "1/3 (33.3%) | passed 0, flagged 0, needs_review 0, weird 1"


def test_no_eta_while_nothing_finishes() -> None:
    assert describe(Snapshot(0, 10, {}), rate=0.0).endswith("0.0/s | ETA ?")


def test_durations() -> None:
    assert [format_duration(s) for s in (0, 9.6, 61, 3600 * 2 + 61)] == [
        "0s",
        "10s",
        "1m01s",
        "2h01m",
    ]


def test_the_bar_fills_with_the_share_done() -> None:
    assert bar(Snapshot(0, 4, {}), width=8) == "[--------]"
    assert bar(Snapshot(1, 4, {}), width=8) == "[##------]"
    assert bar(Snapshot(4, 4, {}), width=8) == "[########]"
    assert bar(Snapshot(0, 0, {}), width=8) == "[########]"


def test_a_log_gets_plain_lines_the_first_then_one_per_interval_then_the_last() -> None:
    progress, stream, clock = report(tty=False, every=10.0)
    progress.update(Snapshot(0, 100, {}))
    clock.now += 5
    progress.update(Snapshot(20, 100, {"passed": 20}))  # within the interval: not written
    clock.now += 5
    progress.update(Snapshot(50, 100, {"passed": 50}))
    clock.now += 1
    progress.update(Snapshot(100, 100, {"passed": 100}))
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert [line.split(" | ")[0] for line in lines] == [
        "batch b1: 0/100 (0.0%)",
        "batch b1: 50/100 (50.0%)",
        "batch b1: 100/100 (100.0%)",
    ]
    assert "5.0/s" in lines[1] and "ETA 10s" in lines[1]
    assert "\r" not in stream.getvalue() and "[" not in stream.getvalue()


def test_finish_does_not_repeat_a_line_already_written() -> None:
    progress, stream, _ = report(tty=False)
    progress.update(Snapshot(3, 3, {"passed": 3}))
    progress.finish()
    assert stream.getvalue().count("\n") == 1


def test_a_terminal_gets_one_line_redrawn_in_place() -> None:
    progress, stream, clock = report(tty=True)
    progress.update(Snapshot(0, 2, {}))
    clock.now += 1
    progress.update(Snapshot(2, 2, {"flagged": 2}))
    progress.finish()
    text = stream.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    first, second = text.strip("\n").split("\r")[1:]
    assert first.startswith("[------------------------] batch b1: 0/2")
    assert second.startswith("[########################] batch b1: 2/2")
    assert "flagged 2" in second
    # No terminal control codes: a shorter line is padded with spaces instead.
    assert "\x1b" not in text


def test_a_shorter_redraw_covers_the_longer_line_before_it() -> None:
    progress, stream, clock = report(tty=True)
    progress.update(Snapshot(0, 10, {"a_very_long_outcome_name": 0}))
    long_width = len(stream.getvalue()) - 1
    clock.now += 1
    progress.update(Snapshot(10, 10, {}))
    assert len(stream.getvalue().split("\r")[-1]) >= long_width


def test_a_tty_is_detected_from_the_stream() -> None:
    for tty in (True, False):
        stream = Stream(tty)
        ProgressReport(stream, label="x").update(Snapshot(0, 1, {}))
        assert stream.getvalue().startswith("\r") is tty
