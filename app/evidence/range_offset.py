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
# Intervals open at an end: which ends they leave out (`Finset.Ico a b` is a, …, b - 1).
_OPEN = {
    "Finset.Ico": "last",
    "Ico": "last",
    "Finset.Ioc": "first",
    "Ioc": "first",
    "Finset.Ioo": "first and last",
    "Ioo": "first and last",
}
_OPEN_INTERVALS = frozenset(_OPEN)
_OPERATORS = frozenset(["∑", "∏"])
_MEMBERSHIP = frozenset(["∈", "in"])
# The body of a big operator ends at a comparison or a connective at its level.
_BODY_STOPS = frozenset(
    ["=", "<", "≤", ">", "≥", "≠", ",", ":=", "∧", "∨", "→", "↔", "|", "then", "else"]
)
# `\sum_{k=1}^{n}`, `\prod_{i = 0}^{100}`, `\sum_{k=1}^n`: operator, index, lower, upper.
_INFORMAL_BOUNDS = re.compile(
    r"\\(sum|prod)\s*_\s*\{\s*([A-Za-z])\s*=\s*([0-9A-Za-z][0-9A-Za-z+\- ]{0,9})\s*\}\s*\^\s*"
    r"(\{[^{}$]{1,20}\}|[A-Za-z0-9])"
)
_OPERATOR = {"sum": "∑", "prod": "∏"}
_IDENT = re.compile(r"[^\W\d][\w.'!?₀-₉]*")


def find_range_offset(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    ranges, intervals = tokens.positions(_RANGES), tokens.positions(_OPEN_INTERVALS)
    if not ranges and not intervals:
        return []
    # (operator, index, upper bound) -> the lower bounds the text writes for it
    said: dict[tuple[str, str, str], set[str]] = {}
    for operator, index, lower, upper in _INFORMAL_BOUNDS.findall(pair.informal[:MAX_TEXT]):
        key = (_OPERATOR[operator], index, _compact(upper.strip("{}")))
        said.setdefault(key, set()).add(_compact(lower))
    if not said:
        return []
    found = [_range_finding(tokens, place) for place in ranges if _one_short(tokens, place, said)]
    found += [
        _interval_finding(tokens, place)
        for place in intervals
        if _open_at_a_said_end(tokens, place, said)
    ]
    return found[:MAX_FINDINGS]


def _one_short(tokens: Tokens, place: int, said: dict[tuple[str, str, str], set[str]]) -> bool:
    """Whether the big operator over `Finset.range` at `place` misses the text's last term:
    the text runs from 0 to the same bound (one term more, whatever the body), or from 1
    and the body uses the index as a number without shifting it (`k`, `x - k`; `a k`
    only renumbers a sequence)."""
    argument, binder = _argument(tokens, place), _binder(tokens, place)
    if argument is None or binder is None:
        return False
    upper = _compact("".join(tokens.texts[argument.start : argument.stop]))
    lowers = said.get((tokens.texts[place - 3], binder, upper), set())
    if "0" in lowers:
        return True
    if "1" not in lowers:
        return False
    body = _body(tokens, argument.stop)
    return _counts_with(body, binder) and not _shifted(body, binder)


def _open_at_a_said_end(
    tokens: Tokens, place: int, said: dict[tuple[str, str, str], set[str]]
) -> bool:
    """Whether `∑ k ∈ Finset.Ico a b` (or `Ioc`, `Ioo`) has the bounds the text sums
    between, both ends included: then it leaves out a term the text has."""
    binder, first = _binder(tokens, place), _argument(tokens, place)
    if binder is None or first is None:
        return False
    after_first = first.stop + 1 if tokens.texts[place + 1] == "(" else first.stop
    second = _argument(tokens, after_first - 1)
    if second is None:
        return False
    lower = _compact("".join(tokens.texts[first.start : first.stop]))
    upper = _compact("".join(tokens.texts[second.start : second.stop]))
    return lower in said.get((tokens.texts[place - 3], binder, upper), set())


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


def _body(tokens: Tokens, after: int) -> list[str]:
    """The big operator's body: from the `,` after the range to the end of its level."""
    texts = tokens.texts
    comma = after + 1 if after < len(texts) and texts[after] == ")" else after
    if comma >= len(texts) or texts[comma] != ",":
        return []  # not the shape read here: an empty body says nothing
    return texts[comma + 1 : tokens.level_end(comma + 1, _BODY_STOPS)]


def _counts_with(body: list[str], binder: str) -> bool:
    """Whether the body uses the index as a number: once not right after a name (`a k`,
    `f k` take it as an argument, which may only renumber)."""
    previous = ["", *body]
    return any(
        text == binder and not (_IDENT.fullmatch(before) or before == ")")
        for text, before in zip(body, previous, strict=False)
    )


def _shifted(body: list[str], binder: str) -> bool:
    """Whether the body writes `binder + 1` or `1 + binder` (it then runs over 1..n)."""
    triples = zip(body, body[1:], body[2:], strict=False)
    return any(t in ((binder, "+", "1"), ("1", "+", binder)) for t in triples)


def _range_finding(tokens: Tokens, place: int) -> Detected:
    argument = _argument(tokens, place) or range(place + 1, place + 2)
    bound = " ".join(tokens.texts[argument.start : argument.stop])
    message = (
        f"`Finset.range {bound}` is `0, …, {bound} - 1`, but the informal text goes up to "
        f"`{bound}`, so the last term is missing; write `Finset.Icc 1 {bound}` (or "
        f"`Finset.range ({bound} + 1)`, or shift the body to `k + 1`)."
    )
    return Detected(message, token_span(tokens, "formal", place, _last(tokens, place, argument)))


def _interval_finding(tokens: Tokens, place: int) -> Detected:
    interval = tokens.texts[place]
    message = (
        f"`{interval}` leaves out the {_OPEN[interval]} term of the sum or product the "
        "informal text writes with both bounds included; write `Finset.Icc`."
    )
    return Detected(message, token_span(tokens, "formal", place, place))


def _last(tokens: Tokens, place: int, argument: range) -> int:
    """The argument's last token, or the `)` closing it."""
    bracketed = tokens.texts[place + 1] == "("
    return min(argument.stop if bracketed else argument.stop - 1, len(tokens) - 1)
