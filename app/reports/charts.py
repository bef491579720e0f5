"""Charts for the HTML report as inline SVG (pure: numbers in, markup out).

Every chart is one `<svg class="chart">` with a `<title>`, rows of label, drawing and
annotation, drawn to a fixed viewBox that the page scales down. No script, no external
resource. All text passes through html.escape: labels hold model names and reasons, which
come from users and providers.

A label is never cut: one too wide for its column is broken into lines (after a space or a
slash where it can be, else anywhere) and its row grows to hold them. Widths are estimated
from generous per-character widths, since a pure renderer cannot measure the font.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from html import escape

from app.reports.stats import Rate
from app.reports.text import milliseconds, rate_text

WIDTH = 880
LABEL = 250  # the label column
PLOT = 380  # the drawing
NOTE_X = LABEL + PLOT + 12  # where the annotation after a row starts
ROW = 26
TOP = 34  # room for the chart's heading (and an axis)
LINE = 15  # between the lines of a broken label
FONT_PX = 12
LABEL_EM = (LABEL - 12) / FONT_PX  # a label line's width, in ems
LEGEND_COLUMNS = 4
# Widths in ems, at or above DejaVu Sans's and the usual sans-serif fonts' (12px labels).
WIDE, CAPITAL, NARROW = set("mwMW@%"), 0.8, set(" !'(),-./:;[]`fijlrt|")
WORD_JOINS = frozenset("-_:.")
COLUMNS_HEIGHT = 160  # the per-day chart's drawing


def bar_chart(title: str, counts: Sequence[tuple[str, int]], colours: Mapping[str, str]) -> str:
    """One horizontal bar per (label, count), scaled to the largest count."""
    largest = max((count for _, count in counts), default=0) or 1
    tops, bottom = _layout(label for label, _ in counts)
    rows = []
    for y, (label, count) in zip(tops, counts, strict=True):
        width = PLOT * count / largest
        bar = _bar(LABEL, y, width, colours.get(label, "#4c78a8"), f"{label}: {count}")
        rows.append(
            _label(label, y) + (bar if count else "") + note(str(count), y, x=LABEL + width + 8)
        )
    return svg_chart(title, bottom + 8, rows)


def stacked_chart(
    title: str,
    rows: Sequence[tuple[str, Mapping[str, int]]],
    categories: Sequence[str],
    colours: Mapping[str, str],
) -> str:
    """One full-width bar per row, split into its categories' shares, with a legend."""
    tops, bottom = _layout(label for label, _ in rows)
    drawn = [
        _stacked_row(label, counts, categories, colours, y)
        for y, (label, counts) in zip(tops, rows, strict=True)
    ]
    legend_top = bottom + 10
    legend = _legend(categories, colours, legend_top)
    lines = -(-len(categories) // LEGEND_COLUMNS)
    return svg_chart(title, legend_top + lines * 20 + 6, [*drawn, legend])


def _stacked_row(
    label: str,
    counts: Mapping[str, int],
    categories: Sequence[str],
    colours: Mapping[str, str],
    y: int,
) -> str:
    total = sum(counts.get(c, 0) for c in categories)
    parts = [_label(label, y)]
    x = float(LABEL)
    for category in categories:
        count = counts.get(category, 0)
        if count and total:
            width = PLOT * count / total
            parts.append(_bar(x, y, width, colours[category], f"{category}: {count} of {total}"))
            x += width
    parts.append(note(f"n={total}" if total else "no readings", y))
    return "".join(parts)


def interval_chart(title: str, rows: Sequence[tuple[str, Rate]]) -> str:
    """Each rate as a dot with its 95% Wilson interval on a 0-100% axis; a rate over fewer
    than 10 cases gets no dot, only its `n<10 (k/n)` label."""
    tops, bottom = _layout(label for label, _ in rows)
    body = [rate_axis(bottom)]
    for y, (label, rate) in zip(tops, rows, strict=True):
        body.append(_label(label, y) + interval_mark(rate, y) + note(rate_text(rate), y))
    return svg_chart(title, bottom + 8, body)


def interval_mark(rate: Rate, y: int) -> str:
    """A rate's dot and 95% interval bar in the row at `y` (nothing under TOO_FEW)."""
    share = rate.shown()
    middle = y + ROW / 2 - 2
    if share is None:
        return ""
    low, high, value = (LABEL + PLOT * v for v in (share.low, share.high, share.value))
    tip = escape(rate_text(rate))
    return (
        f'<g class="interval"><title>{tip}</title>'
        f'<line x1="{low:.1f}" y1="{middle:.1f}" x2="{high:.1f}" y2="{middle:.1f}" />'
        f'<line x1="{low:.1f}" y1="{middle - 5:.1f}" x2="{low:.1f}" y2="{middle + 5:.1f}" />'
        f'<line x1="{high:.1f}" y1="{middle - 5:.1f}" x2="{high:.1f}" y2="{middle + 5:.1f}" />'
        f'<circle cx="{value:.1f}" cy="{middle:.1f}" r="4.5" /></g>'
    )


def rate_axis(bottom: int) -> str:
    """The 0-100% grid and ticks of a rate chart reaching down to `bottom`."""
    ticks = []
    for step in range(5):
        x = LABEL + PLOT * step / 4
        ticks.append(
            f'<line class="grid" x1="{x:.1f}" y1="{TOP - 4}" x2="{x:.1f}" y2="{bottom}" />'
            f'<text class="tick" x="{x:.1f}" y="{TOP - 8}" text-anchor="middle">{step * 25}%</text>'
        )
    return "".join(ticks)


def latency_chart(title: str, rows: Sequence[tuple[str, float | None, float | None]]) -> str:
    """p50 and p95 latency per row as two bars on one scale (the largest p95)."""
    largest = max((p95 for _, _, p95 in rows if p95 is not None), default=0.0) or 1.0
    tops, bottom = _layout(label for label, _, _ in rows)
    body = []
    for y, (label, p50, p95) in zip(tops, rows, strict=True):
        body.append(_label(label, y) + _latency_bars(p50, p95, largest, y))
    return svg_chart(title, bottom + 8, body)


def _latency_bars(p50: float | None, p95: float | None, largest: float, y: int) -> str:
    if p50 is None or p95 is None:
        return note("no latency recorded", y)
    both = f"p50 {milliseconds(p50)} ms, p95 {milliseconds(p95)} ms"
    return (
        _bar(LABEL, y, PLOT * p95 / largest, "#9ecae9", f"p95 {milliseconds(p95)} ms")
        + _bar(LABEL, y + 5, PLOT * p50 / largest, "#2b6ca3", f"p50 {milliseconds(p50)} ms", 8)
        + note(both, y)
    )


def svg_chart(title: str, height: int, body: Iterable[str]) -> str:
    """One chart: an SVG of the page's width with its (escaped) title and heading."""
    heading = escape(title)
    return (
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}"><title>{heading}</title>'
        f'<text class="heading" x="0" y="14">{heading}</text>{"".join(body)}</svg>'
    )


def _label(label: str, y: int) -> str:
    x = LABEL - 8
    lines = "".join(
        f'<tspan x="{x}" dy="{0 if i == 0 else LINE}">{escape(line)}</tspan>'
        for i, line in enumerate(label_lines(label))
    )
    return (
        f'<text class="label" x="{x}" y="{y + ROW / 2 + 2:.1f}" text-anchor="end">'
        f"<title>{escape(label)}</title>{lines}</text>"
    )


def label_lines(label: str, width_em: float = LABEL_EM) -> list[str]:
    """The whole label in lines no wider than `width_em`, broken after a space or a slash
    where one falls within a line; a word wider than a line after its last `-`, `_`, `:`
    or `.` that fits, else between characters. Only spaces at a break go."""
    lines: list[str] = []
    line = ""
    for piece in re.findall(r"[^\s/]*\s*/*\s*", label):
        if line and text_em((line + piece).rstrip()) > width_em:
            lines.append(line.rstrip())
            line = piece.lstrip()
        else:
            line += piece
        while text_em(line.rstrip()) > width_em:  # one piece wider than a line
            cut = _word_cut(line, width_em)
            lines.append(line[:cut].rstrip())
            line = line[cut:].lstrip()
    return [*lines, line.rstrip()] if line.strip() or not lines else lines


def text_em(text: str) -> float:
    """An estimate of the text's width in ems that no common sans-serif font exceeds."""
    return sum(_char_em(c) for c in text)


def _char_em(char: str) -> float:
    if char in WIDE or not char.isascii():
        return 1.0
    if char in NARROW:
        return 0.42
    return CAPITAL if char.isupper() else 0.65


def _word_cut(word: str, width_em: float) -> int:
    """Where to break a word too wide for a line: after the last joining character that
    fits, else after as many characters as fit."""
    fits = _fitting(word, width_em)
    joins = [i + 1 for i, char in enumerate(word[:fits]) if char in WORD_JOINS]
    return joins[-1] if joins else fits


def _fitting(text: str, width_em: float) -> int:
    """How many leading characters of `text` fit in `width_em` (at least one)."""
    used = 0.0
    for index, char in enumerate(text):
        used += _char_em(char)
        if used > width_em:
            return max(1, index)
    return len(text)


def _layout(labels: Iterable[str]) -> tuple[list[int], int]:
    """Each row's top, and the bottom of the last: a row is as tall as its label's lines."""
    tops, y = [], TOP
    for label in labels:
        tops.append(y)
        y += max(ROW, len(label_lines(label)) * LINE + 11)
    return tops, y


def _bar(x: float, y: int, width: float, colour: str, tip: str, height: int = 18) -> str:
    return (
        f'<rect class="bar" x="{x:.1f}" y="{y + 2}" width="{max(width, 1.0):.1f}" '
        f'height="{height}" fill="{escape(colour)}"><title>{escape(tip)}</title></rect>'
    )


def note(text: str, y: int, x: float = NOTE_X) -> str:
    """A row's note (counts, a rate's text) after its drawing, escaped."""
    return f'<text class="note" x="{x:.1f}" y="{y + ROW / 2 + 2:.1f}">{escape(text)}</text>'


def _legend(categories: Sequence[str], colours: Mapping[str, str], top: int) -> str:
    items = []
    for index, category in enumerate(categories):
        x = LABEL + (index % LEGEND_COLUMNS) * 150
        y = top + (index // LEGEND_COLUMNS) * 20
        items.append(
            f'<rect x="{x}" y="{y}" width="12" height="12" fill="{escape(colours[category])}" />'
            f'<text class="legend" x="{x + 17}" y="{y + 10}">{escape(category)}</text>'
        )
    return f'<g class="legend">{"".join(items)}</g>'


def day_chart(
    title: str,
    days: Sequence[tuple[date, Mapping[str, int]]],
    categories: Sequence[str],
    colours: Mapping[str, str],
) -> str:
    """One column per day with screenings, stacked by category, placed by its date (a day
    without any is a gap) and scaled to the busiest day; the first and last days named."""
    if not days:
        return svg_chart(title, TOP + 8, [note("no screenings", 0, x=0)])
    first, last = days[0][0], days[-1][0]
    span = (last - first).days + 1
    step = (WIDTH - LABEL) / span
    largest = max(sum(counts.values()) for _, counts in days) or 1
    base = TOP + COLUMNS_HEIGHT
    body = [_column_axis(largest, base)]
    for day, counts in days:
        x = LABEL + (day - first).days * step
        body.append(_column(x, max(step - 1, 1.0), day, counts, categories, colours, largest, base))
    body.append(_day_ticks(first, last, base))
    legend_top = base + 34
    lines = -(-len(categories) // LEGEND_COLUMNS)
    return svg_chart(
        title, legend_top + lines * 20 + 6, [*body, _legend(categories, colours, legend_top)]
    )


def _column(
    x: float,
    width: float,
    day: date,
    counts: Mapping[str, int],
    categories: Sequence[str],
    colours: Mapping[str, str],
    largest: int,
    base: int,
) -> str:
    total = sum(counts.values())
    shares = ", ".join(f"{c} {counts.get(c, 0)}" for c in categories)
    parts, y = [f"<title>{escape(f'{day.isoformat()}: {total} ({shares})')}</title>"], float(base)
    for category in categories:
        height = COLUMNS_HEIGHT * counts.get(category, 0) / largest
        if height:
            y -= height
            parts.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" '
                f'height="{height:.1f}" fill="{escape(colours[category])}" />'
            )
    return f'<g class="day">{"".join(parts)}</g>'


def _column_axis(largest: int, base: int) -> str:
    top = base - COLUMNS_HEIGHT
    return (
        f'<line class="grid" x1="{LABEL}" y1="{top}" x2="{WIDTH}" y2="{top}" />'
        f'<line class="grid" x1="{LABEL}" y1="{base}" x2="{WIDTH}" y2="{base}" />'
        f'<text class="tick" x="{LABEL - 8}" y="{top + 4}" text-anchor="end">{largest}</text>'
        f'<text class="tick" x="{LABEL - 8}" y="{base + 4}" text-anchor="end">0</text>'
    )


def _day_ticks(first: date, last: date, base: int) -> str:
    y = base + 16
    ticks = f'<text class="tick" x="{LABEL}" y="{y}">{first.isoformat()}</text>'
    if last != first:
        ticks += (
            f'<text class="tick" x="{WIDTH}" y="{y}" text-anchor="end">{last.isoformat()}</text>'
        )
    return ticks


# The calibration page's rate chart: interval_chart's drawing, but a rate without cases says
# so where its dot would be (interval_chart notes it `n<10 (0/0)`).


def rate_chart(title: str, rows: Sequence[tuple[str, Rate]], empty: str) -> str:
    """Each rate as a dot with its 95% interval on a 0-100% axis, its counts after it; a
    rate over no case reads `empty` instead. `rows` are labels of our own, short enough for
    the label column."""
    bottom = TOP + len(rows) * ROW
    drawn = [_rate_row(label, rate, TOP + i * ROW, empty) for i, (label, rate) in enumerate(rows)]
    return svg_chart(title, bottom + 8, [rate_axis(bottom), *drawn])


def _rate_row(label: str, rate: Rate, y: int, empty: str) -> str:
    baseline = y + ROW / 2 + 2
    label_text = _text("label", LABEL - 8, baseline, label, ' text-anchor="end"')
    if rate.denominator == 0:
        return label_text + _text("empty", LABEL + 8, baseline, empty) + note("0/0", y)
    return label_text + interval_mark(rate, y) + note(rate_text(rate), y)


def _text(css: str, x: float, y: float, text: str, extra: str = "") -> str:
    return f'<text class="{css}" x="{x:.1f}" y="{y:.1f}"{extra}>{escape(text)}</text>'
