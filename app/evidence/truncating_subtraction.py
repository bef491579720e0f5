"""Lint `truncating_subtraction`: a `-` that Lean computes in ℕ, where it truncates at 0,
on quantities that can be negative.

In ℕ, `a - b = 0` whenever `b ≥ a` (`Nat.sub_eq_zero_of_le`), so `f (m + n) - f m - f n = 0`
also holds when the difference is negative: the hypothesis is weaker than the informal
one (dev: `imo_1982_p1` before its fix, which compares in ℤ). Fires on `a - b` when:
- both sides are ℕ: `a` ends in, and `b` is, a variable whose every written type is `ℕ`
  or such a function `f : ℕ → ℕ` applied (a numeral subtrahend `n - 1` is left alone: it
  is how ℕ statements count down, and its guard `0 < n` is usually there);
- nothing in its clause (between connectives) casts: no `ℤ`, `ℝ`, `ℚ`, `ℂ`, `↑`;
- no hypothesis orders the two variables (`b ≤ a`, `b < a`, `a ≥ b`, `a > b`);
- the informal text writes a subtraction (`-`, `−`, minus, difference, less).
"""

from __future__ import annotations

import re
from bisect import bisect_left

from app.evidence.finding import Detected
from app.evidence.lean_source import OPENERS, Kind, Tokens, lean_tokens
from app.evidence.typed_names import TypeText, declared_types, token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
_MINUS = frozenset(["-"])
_CLAUSE_ENDS = frozenset([",", ":", ":=", "∧", "∨", "→", "↔", "¬", "∀", "∃", "|"])
# Another number type, a cast, or a real function in the clause: the `-` may well not be ℕ's.
_CASTS = frozenset(
    ["ℤ", "ℝ", "ℚ", "ℂ", "↑", "Int", "Real", "Rat", "π", "√", "sqrt", "Real.sqrt", "Real.pi"]
)
# `a - b = 3`, `a - b > 0`, `Nat.Prime (a - b)`: a truncated (zero) difference fails these,
# so they already say `b < a`.
_NONZERO_CLAIMS = frozenset(["=", ">", "≥", "≠"])
_PRIMES = frozenset(["Nat.Prime", "Prime"])
_COMPARISONS = frozenset(["≤", "<", "≥", ">"])
_WINDOW = 4  # tokens looked at on each side of a comparison for a function's name
_ORDERS = {"≤": False, "<": False, "≥": True, ">": True}  # True: the larger side first
_SPOKEN = re.compile(r"-|−|minus|differen|less|subtract", re.IGNORECASE)
_NATURAL: TypeText = ("ℕ",)
_NATURAL_FUNCTION: TypeText = ("ℕ", "→", "ℕ")


def find_truncating_subtraction(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    minuses = tokens.positions(_MINUS)
    if not minuses or not _SPOKEN.search(pair.informal):
        return []
    # Only a `-` between two identifiers (or a call and an identifier) can be one; the
    # statement's types and orders are read only when there is such a `-`.
    idents = tokens.idents()
    candidates = [
        index
        for index in minuses
        if 0 < index < len(tokens) - 1
        and idents[index + 1]
        and (idents[index - 1] or tokens.texts[index - 1] == ")")
    ]
    if not candidates:
        return []
    context = _Context(tokens)
    found: list[Detected] = []
    for index in candidates:
        if _truncates(tokens, context, index):
            found.append(_finding(tokens, index))
            if len(found) == MAX_FINDINGS:
                break
    return found


class _Context:
    """What every `-` of one statement is judged against, each part worked out once."""

    def __init__(self, tokens: Tokens) -> None:
        self.types = declared_types(tokens)
        self.ends = tokens.positions(_CLAUSE_ENDS)
        self.orders = _orders(tokens)
        self._casting: dict[int, bool] = {}  # clause start -> whether it casts
        self._tokens = tokens

    def casts(self, index: int) -> bool:
        """The clause around `index` names another number type or casts (`(x : ℤ)`)."""
        after = bisect_left(self.ends, index)
        start = self.ends[after - 1] + 1 if after else 0
        if start not in self._casting:
            stop = self.ends[after] if after < len(self.ends) else len(self._tokens)
            clause = self._tokens.texts[start : stop + 2]  # `= (0 : ℤ)`: the type after `:`
            self._casting[start] = not _CASTS.isdisjoint(clause)
        return self._casting[start]


def _truncates(tokens: Tokens, context: _Context, index: int) -> bool:
    if not 0 < index < len(tokens) - 1:
        return False
    left = _left_variable(tokens, context.types, index)
    right = _right_variable(tokens, context.types, index)
    if left is None or right is None or context.casts(index):
        return False
    if _claims_nonzero(tokens, index):
        return False
    return (left, right) not in context.orders


def _claims_nonzero(tokens: Tokens, index: int) -> bool:
    """`a - b = 3` (a nonzero numeral), `a - b > 0`, or `Nat.Prime (a - b)`."""
    texts = tokens.texts
    after = index + 2
    if after + 1 < len(texts) and texts[after] in _NONZERO_CLAIMS:
        value = texts[after + 1]
        if tokens.kinds[after + 1] is Kind.NUMBER and (texts[after] != "=" or value.strip("0.")):
            return True
    return index >= 3 and texts[index - 2] == "(" and texts[index - 3] in _PRIMES


def _every(types: dict[str, list[TypeText]], name: str, wanted: TypeText) -> bool:
    written = types.get(name, [])
    return bool(written) and all(type_text == wanted for type_text in written)


def _left_variable(tokens: Tokens, types: dict[str, list[TypeText]], index: int) -> str | None:
    """The ℕ variable (or ℕ → ℕ function applied) that `a` ends in."""
    texts, before = tokens.texts, index - 1
    if texts[before] == ")":
        opener = _opener(tokens, before)
        if opener > 0 and _every(types, texts[opener - 1], _NATURAL_FUNCTION):
            return texts[opener - 1]
        return None
    if tokens.kinds[before] is not Kind.IDENT or (before > 0 and texts[before - 1] == "^"):
        return None  # `a ^ p - a`: a power is no plain variable
    if before > 0 and _every(types, texts[before - 1], _NATURAL_FUNCTION):
        return texts[before - 1]  # `f m - ...`
    return texts[before] if _every(types, texts[before], _NATURAL) else None


def _right_variable(tokens: Tokens, types: dict[str, list[TypeText]], index: int) -> str | None:
    texts, after = tokens.texts, index + 1
    if tokens.kinds[after] is not Kind.IDENT:
        return None
    name = texts[after]
    if _every(types, name, _NATURAL_FUNCTION):
        return name
    following = texts[after + 1] if after + 1 < len(texts) else ""
    if following in ("^", "(", ".") or not _every(types, name, _NATURAL):
        return None
    return name


def _opener(tokens: Tokens, closer: int) -> int:
    """The opener that `closer` closes: the last opener before it at its inner depth."""
    openers = tokens.positions_by_depth(OPENERS).get(tokens.depths[closer] + 1, [])
    found = bisect_left(openers, closer) - 1
    return openers[found] if found >= 0 else -1


def _orders(tokens: Tokens) -> set[tuple[str, str]]:
    """(larger, smaller) for each comparison `smaller ≤ larger`, `larger > smaller`; and
    (f, f) for a function `f` written on both sides of one (`f i < f (i + 1)`)."""
    texts, found = tokens.texts, set[tuple[str, str]]()
    for index in tokens.positions(_COMPARISONS):
        if not 0 < index < len(texts) - 1:
            continue
        before, after = texts[index - 1], texts[index + 1]
        found.add((before, after) if _ORDERS[texts[index]] else (after, before))
        near = set(texts[max(0, index - _WINDOW) : index])
        found.update((name, name) for name in near.intersection(texts[index + 1 : index + 5]))
    return found


def _finding(tokens: Tokens, index: int) -> Detected:
    message = (
        "this `-` is computed in ℕ, where it is 0 whenever the difference would be "
        "negative, so the statement says less than the informal one; cast to ℤ "
        "(`(a : ℤ) - b`) or add the hypothesis that the subtrahend is at most the minuend."
    )
    return Detected(message, token_span(tokens, "formal", index - 1, index + 1))
