"""A statement's text with its evidence findings' spans marked, for the item page. Pure.

Findings point at `line` (1-based, lines end at LF) and the code-point columns
`[column, end_column)` of one field of the pair (app/evidence/finding.Span). The text is
written back exactly (escaped), with `<mark>` around each marked stretch, so what a
person copies from the page is the statement itself; line numbers are drawn by the page
from each line's `data-line` (never part of the text) for the same reason. A span past
its line's end is cut at it; one on a line the text does not have, or of no width, marks
nothing (the finding is still listed). A bidi control is written as its marker
(app/page_text.py), never as itself: spans count the stored text's columns, each piece is
marked after it is cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from markupsafe import Markup

from app.page_text import escaped, escaped_plain


@dataclass(frozen=True, slots=True)
class Mark:
    """One finding's span in a text: `index` numbers the finding on the page."""

    line: int
    column: int
    end_column: int
    index: int
    title: str
    css: str


def numbered(text: str, marks: Sequence[Mark]) -> Markup:
    """As `marked`, each line in a `<span class="ln" data-line="N">`: the page numbers
    lines from it and soft-wraps a long one under a hanging indent, so the number stays
    the source's line; the newlines between the spans are the text's own."""
    shown = marked(text, marks).split("\n")
    return Markup("\n").join(
        Markup(f'<span class="ln" data-line="{number}"{_indent(source)}>{line}</span>')
        for number, (source, line) in enumerate(zip(text.split("\n"), shown, strict=True), 1)
    )


def _indent(line: str) -> str:
    """The line's own indent, so its continuation rows hang under its text, not its margin."""
    width = len(line) - len(line.lstrip(" "))
    return f' style="--in: {width}ch"' if width else ""


def marked(text: str, marks: Sequence[Mark]) -> Markup:
    """`text` escaped, each mark's stretch in a `<mark>` (overlaps split where they
    meet, the stretch carrying every finding that covers it)."""
    by_line: dict[int, list[Mark]] = {}
    for mark in marks:
        by_line.setdefault(mark.line, []).append(mark)
    lines = text.split("\n")
    return Markup("\n".join(_line(line, by_line.get(n, [])) for n, line in enumerate(lines, 1)))


def _line(line: str, marks: list[Mark]) -> str:
    spans = [(s, e, m) for m in marks for s, e in [_clamped(m, len(line))] if s < e]
    if not spans:
        return escaped(line)
    cuts = sorted({0, len(line), *(s for s, _, _ in spans), *(e for _, e, _ in spans)})
    pieces = []
    for start, end in pairwise(cuts):
        covering = [m for s, e, m in spans if s <= start and end <= e]
        pieces.append(_piece(line[start:end], covering))
    return "".join(pieces)


def _clamped(mark: Mark, length: int) -> tuple[int, int]:
    start = min(max(mark.column, 0), length)
    return start, min(max(mark.end_column, start), length)


def _piece(text: str, covering: list[Mark]) -> str:
    body = escaped(text)
    if not covering:
        return body
    title = escaped_plain("\n".join(m.title for m in covering))
    css = " ".join(sorted({m.css for m in covering}))
    indices = " ".join(str(m.index) for m in covering)
    return f'<mark class="span {css}" data-findings="{indices}" title="{title}">{body}</mark>'
