"""Lint `measure_dimension`: `volume` of a set in a space of more dimensions than the
quantity the informal text asks for.

`MeasureTheory.volume` on `EuclideanSpace ℝ (Fin n)`, `Fin n → ℝ` or `ℝ × ... × ℝ` is the
n-dimensional Lebesgue measure, so the area of a triangle in ℝ³ is `0` under it, and a
length in the plane too; `μH[d]` (the d-dimensional Hausdorff measure) measures a
d-dimensional quantity in any space. Fires when the formal statement uses `volume`, the
informal text names exactly one of length (1), area (2) or volume (3), and every point
type with a known dimension that the statement writes has more dimensions than that.
No point type with a known dimension, or one of the named dimension, silences it.
"""

from __future__ import annotations

import re

from app.evidence.finding import Detected
from app.evidence.lean_source import Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

VOLUMES = frozenset(["volume", "MeasureTheory.volume"])
_QUANTITIES = re.compile(r"\b(length|perimeter|area|volume)s?\b", re.IGNORECASE)
_DIMENSION = {"length": 1, "perimeter": 1, "area": 2, "volume": 3}
_REALS = frozenset(["ℝ"])
_EUCLIDEAN = frozenset(["EuclideanSpace"])
_COMPLEX = frozenset(["ℂ"])


def find_measure_dimension(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    volumes = tokens.positions(VOLUMES)
    if not volumes:
        return []
    named = {_DIMENSION[word.lower()] for word in _QUANTITIES.findall(pair.informal)}
    if len(named) != 1:
        return []
    wanted = named.pop()
    dimensions = point_dimensions(tokens)
    if not dimensions or min(dimensions) <= wanted:
        return []
    space = max(dimensions)
    message = (
        f"`volume` here is the {space}-dimensional measure, but the informal text asks for "
        f"a {_NAMES[wanted]}, which that measure makes 0; use `μH[{wanted}]` "
        f"(`MeasureTheory.Measure.hausdorffMeasure {wanted}`) or a space of dimension {wanted}."
    )
    return [Detected(message, token_span(tokens, "formal", volumes[0], volumes[0]))]


_NAMES = {1: "length", 2: "area", 3: "volume"}


def point_dimensions(tokens: Tokens) -> set[int]:
    """The dimensions of the point types written: `EuclideanSpace ℝ (Fin n)`,
    `Fin n → ℝ`, `ℝ × ℝ × ℝ`, `ℂ` (n a numeral)."""
    texts, found = tokens.texts, set[int]()
    for index in tokens.positions(_EUCLIDEAN):
        part = texts[index + 1 : index + 6]
        if part[:3] == ["ℝ", "(", "Fin"] and len(part) == 5 and part[4] == ")":
            found.update(_numeral(part[3]))
    for index in tokens.positions(_REALS):
        if index >= 3 and texts[index - 1] == "→" and texts[index - 3] == "Fin":
            found.update(_numeral(texts[index - 2]))
        if _starts_product(texts, index):
            found.add(_product_length(texts, index))
    if tokens.positions(_COMPLEX):
        found.add(2)
    return found


def _starts_product(texts: list[str], index: int) -> bool:
    after = index + 2 < len(texts) and texts[index + 1] == "×" and texts[index + 2] == "ℝ"
    before = index >= 2 and texts[index - 1] == "×" and texts[index - 2] == "ℝ"
    return after and not before


def _product_length(texts: list[str], index: int) -> int:
    length = 1
    while index + 2 < len(texts) and texts[index + 1] == "×" and texts[index + 2] == "ℝ":
        index, length = index + 2, length + 1
    return length


def _numeral(text: str) -> set[int]:
    return {int(text)} if text.isascii() and text.isdigit() and len(text) < 4 else set()
