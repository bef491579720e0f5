"""Charts for the HTML report as inline SVG (pure: numbers in, markup out).

Every chart is one `<svg class="chart">` with a `<title>`, rows of label, drawing and
annotation, drawn to a fixed viewBox that the page scales down. No script, no external
resource. All text passes through html.escape: labels hold model names and reasons, which
come from users and providers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape

from app.reports.stats import Rate
from app.reports.text import milliseconds, rate_text

WIDTH = 880
LABEL = 250  # the label column
PLOT = 380  # the drawing
NOTE_X = LABEL + PLOT + 12  # where the annotation after a row starts
ROW = 26
TOP = 34  # room for the chart's heading (and an axis)
LABEL_CHARS = 36
LEGEND_COLUMNS = 4


def bar_chart(title: str, counts: Sequence[tuple[str, int]], colours: Mapping[str, str]) -> str:
    """One horizontal bar per (label, count), scaled to the largest count."""
    largest = max((count for _, count in counts), default=0) or 1
    rows = []
    for index, (label, count) in enumerate(counts):
        y = TOP + index * ROW
        width = PLOT * count / largest
        bar = _bar(LABEL, y, width, colours.get(label, "#4c78a8"), f"{label}: {count}")
        rows.append(
            _label(label, y) + (bar if count else "") + _note(str(count), y, x=LABEL + width + 8)
        )
    return _svg(title, TOP + len(counts) * ROW + 8, rows)


def stacked_chart(
    title: str,
    rows: Sequence[tuple[str, Mapping[str, int]]],
    categories: Sequence[str],
    colours: Mapping[str, str],
) -> str:
    """One full-width bar per row, split into its categories' shares, with a legend."""
    drawn = [
        _stacked_row(label, counts, categories, colours, TOP + i * ROW)
        for i, (label, counts) in enumerate(rows)
    ]
    legend_top = TOP + len(rows) * ROW + 10
    legend = _legend(categories, colours, legend_top)
    lines = -(-len(categories) // LEGEND_COLUMNS)
    return _svg(title, legend_top + lines * 20 + 6, [*drawn, legend])


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
    parts.append(_note(f"n={total}" if total else "no readings", y))
    return "".join(parts)


def interval_chart(title: str, rows: Sequence[tuple[str, Rate]]) -> str:
    """Each rate as a dot with its 95% Wilson interval on a 0-100% axis; a rate over fewer
    than 10 cases gets no dot, only its `n<10 (k/n)` label."""
    body = [_axis(TOP + len(rows) * ROW)]
    for index, (label, rate) in enumerate(rows):
        y = TOP + index * ROW
        body.append(_label(label, y) + _interval(rate, y) + _note(rate_text(rate), y))
    return _svg(title, TOP + len(rows) * ROW + 8, body)


def _interval(rate: Rate, y: int) -> str:
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


def _axis(bottom: int) -> str:
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
    body = []
    for index, (label, p50, p95) in enumerate(rows):
        y = TOP + index * ROW
        body.append(_label(label, y) + _latency_bars(p50, p95, largest, y))
    return _svg(title, TOP + len(rows) * ROW + 8, body)


def _latency_bars(p50: float | None, p95: float | None, largest: float, y: int) -> str:
    if p50 is None or p95 is None:
        return _note("no latency recorded", y)
    note = f"p50 {milliseconds(p50)} ms, p95 {milliseconds(p95)} ms"
    return (
        _bar(LABEL, y, PLOT * p95 / largest, "#9ecae9", f"p95 {milliseconds(p95)} ms")
        + _bar(LABEL, y + 5, PLOT * p50 / largest, "#2b6ca3", f"p50 {milliseconds(p50)} ms", 8)
        + _note(note, y)
    )


def _svg(title: str, height: int, body: Iterable[str]) -> str:
    heading = escape(title)
    return (
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {height}" '
        f'width="{WIDTH}" height="{height}"><title>{heading}</title>'
        f'<text class="heading" x="0" y="14">{heading}</text>{"".join(body)}</svg>'
    )


def _label(label: str, y: int) -> str:
    shown = label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1] + "…"
    return (
        f'<text class="label" x="{LABEL - 8}" y="{y + ROW / 2 + 2:.1f}" text-anchor="end">'
        f"<title>{escape(label)}</title>{escape(shown)}</text>"
    )


def _bar(x: float, y: int, width: float, colour: str, tip: str, height: int = 18) -> str:
    return (
        f'<rect class="bar" x="{x:.1f}" y="{y + 2}" width="{max(width, 1.0):.1f}" '
        f'height="{height}" fill="{escape(colour)}"><title>{escape(tip)}</title></rect>'
    )


def _note(text: str, y: int, x: float = NOTE_X) -> str:
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
