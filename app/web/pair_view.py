"""How the item page shows the pair: the informal statement with its TeX as MathML (and
the raw text a toggle away), the header and the Lean with line numbers, every evidence
finding that knows where it is marked in the text it is about, and the back-translations
that go right under the Lean. Pure: it reads an item as the API shows it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from app.api.schemas import EvidenceOut, ReviewOut
from app.vocabulary import Role
from app.web.marked_text import Mark, marked, numbered
from app.web.math_text import render
from app.web.presentation import plain_prose

FIELDS = ("informal", "formal", "header")
# A finding without an end marks the rest of its line.
TO_LINE_END = 10**9


@dataclass(frozen=True, slots=True)
class Located:
    """An evidence finding as listed on the page: its number there and where it points."""

    index: int
    finding: EvidenceOut
    where: str | None

    @property
    def marked(self) -> bool:
        """Whether the page marks its span (and can take the reader there)."""
        found = self.finding
        return found.field in FIELDS and found.line is not None and found.column is not None


@dataclass(frozen=True, slots=True)
class PairView:
    informal_math: Markup
    # How many TeX parts became MathML, and text-mode commands HTML: the raw-text toggle
    # is offered only when something was rendered.
    rendered_parts: int
    # The informal statement as written, its findings marked.
    informal_raw: Markup
    # The header and the Lean, one numbered span a line, their findings marked.
    formal: Markup
    header: Markup
    evidence: list[Located]


def pair_view(
    informal: str,
    formal: str,
    header: str,
    evidence: Sequence[EvidenceOut],
    more_marks: Mapping[str, Sequence[Mark]] | None = None,
) -> PairView:
    """`more_marks`: spans by field that are not evidence findings (Lean's errors)."""
    located = [Located(i, f, _where(f)) for i, f in enumerate(evidence, start=1)]
    marks = {name: _marks(located, name) for name in FIELDS}
    for name, extra in (more_marks or {}).items():
        marks[name] = [*marks[name], *extra]
    math = render(informal)
    return PairView(
        informal_math=math.html,
        rendered_parts=math.converted + math.formatted,
        informal_raw=marked(informal, marks["informal"]),
        formal=numbered(formal, marks["formal"]),
        header=numbered(header, marks["header"]),
        evidence=located,
    )


def _where(finding: EvidenceOut) -> str | None:
    """`formal, line 2, columns 5-9` (1-based for people), or None without a location."""
    if finding.field is None or finding.line is None:
        return None
    place = f"{finding.field}, line {finding.line}"
    if finding.column is None:
        return place
    if finding.end_column is None or finding.end_column <= finding.column + 1:
        return f"{place}, column {finding.column + 1}"
    return f"{place}, columns {finding.column + 1}-{finding.end_column}"


def _marks(located: Sequence[Located], field: str) -> list[Mark]:
    return [
        Mark(
            line=entry.finding.line,
            column=entry.finding.column,
            end_column=entry.finding.end_column
            if entry.finding.end_column is not None
            else TO_LINE_END,
            index=entry.index,
            title=f"{entry.finding.code}: {plain_prose(entry.finding.message)}",
            css=f"severity-{entry.finding.severity}",
        )
        for entry in located
        if entry.finding.field == field
        and entry.finding.line is not None
        and entry.finding.column is not None
    ]


@dataclass(frozen=True, slots=True)
class BackTranslation:
    """A translator's back-translation shown as the informal statement is: its TeX as
    MathML (app/web/math_text.py), the text as written a toggle away."""

    review: ReviewOut
    math: Markup
    # How many TeX parts and text-mode commands were rendered: no toggle without any.
    rendered_parts: int
    raw: Markup


def back_translations(reviews: Sequence[ReviewOut]) -> list[BackTranslation]:
    """The translator's replies that carry a back-translation, attempt order."""
    translator = Role.TRANSLATOR
    found = sorted(
        (r for r in reviews if r.role == translator and r.back_translation),
        key=lambda r: r.attempt,
    )
    return [_back_translation(review, review.back_translation or "") for review in found]


def _back_translation(review: ReviewOut, text: str) -> BackTranslation:
    math = render(text)
    return BackTranslation(review, math.html, math.converted + math.formatted, marked(text, []))
