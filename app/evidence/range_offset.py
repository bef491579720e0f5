"""Lint `range_offset`: `∑ k ∈ Finset.range n, f k` where the informal text sums to `n`.

`Finset.range n` is `{0, 1, …, n - 1}` (`Finset.mem_range`): it stops one short of `n`. So
where the informal text writes `\\sum_{k=1}^{n}` (or `_{k=0}^{n}`, a product likewise)
and the statement writes `Finset.range n` with the same `n` and an unshifted body, the
last term `f n` is missing (and `f 0` is there where the text starts at 1). The body is
shifted, and so right, when it writes `k + 1` or `1 + k`; `Finset.Icc 1 n` is the
faithful form. Linear: the informal bounds are read by one regular expression that cannot
backtrack, and each `range` token looks at its argument and its body's level once.
"""

from __future__ import annotations

import re

from app.evidence.finding import Detected
from app.evidence.lean_source import Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
MAX_TEXT = 20_000
_RANGES = frozenset(["Finset.range", "range"])
_OPERATORS = frozenset(["∑", "∏"])
_MEMBERSHIP = frozenset(["∈", "in"])
# The body of a big operator ends at a comparison or a connective at its level.
_BODY_STOPS = frozenset(
    ["=", "<", "≤", ">", "≥", "≠", ",", ":=", "∧", "∨", "→", "↔", "|", "then", "else"]
)
# `\sum_{k=1}^{n}`, `\prod_{i = 0}^{100}`, `\sum_{k=1}^n`: the upper bound's text.
_INFORMAL_BOUNDS = re.compile(
    r"\\(?:sum|prod)\s*_\s*\{\s*[A-Za-z]\s*=\s*[01]\s*\}\s*\^\s*(\{[^{}$]{1,20}\}|[A-Za-z0-9])"
)


def find_range_offset(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    ranges = tokens.positions(_RANGES)
    if not ranges:
        return []
    informal = pair.informal[:MAX_TEXT]
    uppers = {_compact(found.strip("{}")) for found in _INFORMAL_BOUNDS.findall(informal)}
    if not uppers:
        return []
    found: list[Detected] = []
    for place in ranges:
        argument = _argument(tokens, place)
        if (
            argument is None
            or _compact("".join(tokens.texts[argument.start : argument.stop])) not in uppers
        ):
            continue
        binder = _binder(tokens, place)
        if binder is None or _shifted(tokens, binder, argument.stop):
            continue
        found.append(_finding(tokens, place, argument))
        if len(found) == MAX_FINDINGS:
            break
    return found


def _compact(text: str) -> str:
    return "".join(text.split()).strip("()")


def _argument(tokens: Tokens, place: int) -> range | None:
    """The tokens of `range`'s argument: one name or numeral, or a bracketed group."""
    start = place + 1
    if start >= len(tokens):
        return None
    if tokens.texts[start] == "(":
        return range(start + 1, tokens.group_end(start) - 1)
    return range(start, start + 1)


def _binder(tokens: Tokens, place: int) -> str | None:
    """The name a `∑ k ∈ range n` / `∏ k in range n` binds (None for another shape)."""
    texts = tokens.texts
    if place >= 3 and texts[place - 1] in _MEMBERSHIP and texts[place - 3] in _OPERATORS:
        return texts[place - 2]
    return None


def _shifted(tokens: Tokens, binder: str, after: int) -> bool:
    """Whether the body (from the `,` after the range to the end of its level) writes
    `binder + 1` or `1 + binder`."""
    texts = tokens.texts
    comma = after + 1 if after < len(texts) and texts[after] == ")" else after
    if comma >= len(texts) or texts[comma] != ",":
        return True  # not the shape read here: say nothing
    end = tokens.level_end(comma + 1, _BODY_STOPS)
    body = texts[comma + 1 : end]
    pairs = zip(body, body[1:], body[2:], strict=False)
    return any((a, b, c) in ((binder, "+", "1"), ("1", "+", binder)) for a, b, c in pairs)


def _finding(tokens: Tokens, place: int, argument: range) -> Detected:
    bound = " ".join(tokens.texts[argument.start : argument.stop])
    message = (
        f"`Finset.range {bound}` is `0, …, {bound} - 1`, but the informal text goes up to "
        f"`{bound}`, so the last term is missing; write `Finset.Icc 1 {bound}` (or "
        f"`Finset.range ({bound} + 1)`, or shift the body to `k + 1`)."
    )
    bracketed = tokens.texts[place + 1] == "("
    last = argument.stop if bracketed else argument.stop - 1  # the `)` or the argument
    return Detected(message, token_span(tokens, "formal", place, min(last, len(tokens) - 1)))
