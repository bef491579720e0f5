"""Lint `contradictory_hypotheses`: the theorem's hypotheses bound one variable by numbers
no value satisfies (`0 < x` and `x < 0`, `x = 2` and `x = 3`, `1 < n ∧ n < 2` in ℕ).

A theorem whose hypotheses cannot all hold is vacuous: it is true, and proved by
contradiction, whatever its conclusion says. Only the plainest bounds are read: a
hypothesis binder (or a top-level conjunct of one) that is exactly `x REL c`, `c REL x`
or `c REL x REL c'`, with `x` a name, `c` a numeral (maybe negative, maybe decimal) and
REL one of `< ≤ > ≥ =`; and a remainder said to be at least its modulus (`e % 2 = 11`).
A variable every written type of which is `ℕ` or `ℤ` has its strict bounds tightened to
whole numbers. Anything else (an expression, a second
variable, a hypothesis under `∀` or `→`) is no bound, which can only hide a finding.
Linear: each hypothesis is split at its top-level `∧` once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from app.evidence.declaration import main_theorem
from app.evidence.finding import Detected
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import declared_types, token_span
from app.vocabulary import Pair

MAX_DIGITS = 30  # a longer numeral is no bound (and costs nothing to read)
_RELATIONS = frozenset(["<", "≤", ">", "≥", "="])
_AND = frozenset(["∧"])
_FLIPPED = {"<": ">", "≤": "≥", ">": "<", "≥": "≤", "=": "="}
_WHOLE = (("ℕ",), ("ℤ",))


@dataclass
class Interval:
    low: Fraction | None = None
    low_strict: bool = False
    high: Fraction | None = None
    high_strict: bool = False
    first: int = -1  # the first bound's token, for the span

    def add(self, relation: str, value: Fraction) -> None:
        if relation in (">", "≥", "="):
            strict = relation == ">"
            if self.low is None or value > self.low or (value == self.low and strict):
                self.low, self.low_strict = value, strict
        if relation in ("<", "≤", "="):
            strict = relation == "<"
            if self.high is None or value < self.high or (value == self.high and strict):
                self.high, self.high_strict = value, strict

    def empty(self, whole: bool) -> bool:
        if self.low is None or self.high is None:
            return False
        low, high = self.low, self.high
        if whole:  # in ℕ/ℤ, `x > 1.5` is `x ≥ 2` and `x > 1` is `x ≥ 2`
            low = Fraction(math.floor(low) + 1 if self.low_strict else math.ceil(low))
            high = Fraction(math.ceil(high) - 1 if self.high_strict else math.floor(high))
            return low > high
        return low > high or (low == high and (self.low_strict or self.high_strict))


def find_contradictory_hypotheses(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    if not tokens.positions(_RELATIONS):
        return []
    theorem = main_theorem(tokens)
    if theorem is None:
        return []
    bounds: dict[str, Interval] = {}
    for binder in theorem.binders:
        if binder.type:
            for start, stop in _conjuncts(tokens, binder.type.start, binder.type.stop):
                if _remainder_too_large(tokens.texts[start:stop]):
                    return [_remainder_finding(tokens, start)]
                _read_bound(tokens, start, stop, bounds)
    # Empty over the reals means empty over ℕ/ℤ too: the statement's types (a pass over
    # all of it) are read only for bounds that leave no whole number but some real one.
    whole_only = []
    for name, interval in bounds.items():
        if interval.empty(whole=False):
            return [_finding(tokens, name, interval)]
        if interval.empty(whole=True):
            whole_only.append(name)
    types = declared_types(tokens) if whole_only else {}
    for name in whole_only:
        if types.get(name) and all(t in _WHOLE for t in types[name]):
            return [_finding(tokens, name, bounds[name])]
    return []


def _remainder_too_large(part: list[str]) -> bool:
    """`e % m = c` (or `c = e % m`) with numerals `c ≥ m > 0`: a remainder is below its
    modulus (`Nat.mod_lt`, `Int.emod_lt_of_pos`), so no value satisfies it."""
    part = part[1:-1] if part[:1] == ["("] and part[-1:] == [")"] else part
    if part.count("=") != 1 or part.count("%") != 1:
        return False
    equals = part.index("=")
    left, right = part[:equals], part[equals + 1 :]
    if "%" in right:
        left, right = right, left
    if len(left) < 3 or left[-2] != "%" or len(right) != 1:
        return False
    modulus, remainder = _numeral(left[-1:]), _numeral(right)
    return modulus is not None and remainder is not None and 0 < modulus <= remainder


def _conjuncts(tokens: Tokens, start: int, stop: int) -> list[tuple[int, int]]:
    """The top-level `∧`-separated parts of `tokens[start:stop]`."""
    parts, begin = [], start
    while begin < stop:
        end = min(tokens.level_end(begin, _AND), stop)
        parts.append((begin, end))
        begin = end + 1
    return parts


def _read_bound(tokens: Tokens, start: int, stop: int, bounds: dict[str, Interval]) -> None:
    texts = tokens.texts
    while stop - start >= 2 and texts[start] == "(" and tokens.group_end(start) == stop:
        start, stop = start + 1, stop - 1
    part = texts[start:stop]
    relations = [i for i, text in enumerate(part) if text in _RELATIONS]
    if not 1 <= len(relations) <= 2:
        return
    pieces = _pieces(part, relations)
    for left, relation, right in zip(
        pieces, [part[i] for i in relations], pieces[1:], strict=False
    ):
        name, value, flipped = _bound(tokens, start, left, right)
        if name is not None and value is not None:
            interval = bounds.setdefault(name, Interval(first=start))
            interval.add(_FLIPPED[relation] if flipped else relation, value)


def _pieces(part: list[str], relations: list[int]) -> list[tuple[int, list[str]]]:
    edges = [-1, *relations, len(part)]
    return [(edges[i] + 1, part[edges[i] + 1 : edges[i + 1]]) for i in range(len(edges) - 1)]


def _bound(
    tokens: Tokens, start: int, left: tuple[int, list[str]], right: tuple[int, list[str]]
) -> tuple[str | None, Fraction | None, bool]:
    """(name, value, whether the relation reads right to left) of `x REL c` / `c REL x`."""
    if _is_name(tokens, start + left[0], left[1]):
        return left[1][0], _numeral(right[1]), False
    if _is_name(tokens, start + right[0], right[1]):
        return right[1][0], _numeral(left[1]), True
    return None, None, False


def _is_name(tokens: Tokens, index: int, piece: list[str]) -> bool:
    return len(piece) == 1 and tokens.kinds[index] is Kind.IDENT and "." not in piece[0]


def _numeral(piece: list[str]) -> Fraction | None:
    sign = 1
    if len(piece) == 2 and piece[0] == "-":
        sign, piece = -1, piece[1:]
    if len(piece) != 1 or not piece[0][:1].isdigit() or len(piece[0]) > MAX_DIGITS:
        return None
    try:
        return sign * Fraction(piece[0])
    except ValueError:
        return None


def _remainder_finding(tokens: Tokens, start: int) -> Detected:
    message = (
        "a hypothesis says a remainder `e % m` equals a number no smaller than `m`, which "
        "no value satisfies, so the theorem is vacuous; a congruence is written "
        "`e % m = c % m` or `e ≡ c [MOD m]`."
    )
    return Detected(message, token_span(tokens, "formal", start, start))


def _finding(tokens: Tokens, name: str, interval: Interval) -> Detected:
    message = (
        f"the hypotheses bound `{name}` by numbers no value satisfies, so the theorem is "
        "vacuous (provable by contradiction whatever it concludes); check each bound "
        f"on `{name}` against the informal text."
    )
    return Detected(message, token_span(tokens, "formal", interval.first, interval.first))
