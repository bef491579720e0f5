"""Lint `infinite_cardinality`: `Set.ncard` or `Nat.card` of a set the statement does not
show finite, in a claim that an infinite set satisfies.

`Set.ncard s` and `Nat.card α` are `0` when the set (type) is infinite (Mathlib:
`Set.Infinite.ncard`, `Nat.card_eq_zero_of_infinite`), so `S.ncard ≤ 3`, `S.ncard < k`,
`S.ncard = 0` and `Even S.ncard` all hold for an infinite `S`: "at most 3 elements" no
longer rules out infinitely many. (`S.ncard = 5` does not have the problem: an infinite
set fails it.) Fires on exactly those shapes when nothing in the statement speaks of
finiteness (`Finite`, `Set.Finite`, `Fintype`, `.Finite`, `Finset`-typed sets, `encard`
beside it) and the set is no set-builder over a type that is finite by its name (`Fin`,
`Bool`, `ZMod`, `Finset (Fin _)`). `Set.encard` (which is `⊤` on infinite sets) is the
safe count.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress
from operator import methodcaller

from app.evidence.finding import Detected
from app.evidence.lean_source import CLOSERS, OPENERS, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
PREFIX_CARDS = frozenset(["Set.ncard", "Nat.card"])
_SUFFIX_CARD = frozenset(["ncard"])
_FINITENESS = ("Finite", "Fintype", "toFinite", "toFinset", "encard", "Finset.card")
_UPPER_AFTER = frozenset(["≤", "<"])
_UPPER_BEFORE = frozenset(["≥", ">"])
_FINITE_TYPES = frozenset(["Fin", "Bool", "ZMod", "Finset"])


def find_infinite_cardinality(pair: Pair) -> list[Detected]:
    if "ncard" not in pair.formal and "Nat.card" not in pair.formal:
        return []
    tokens = lean_tokens(pair.formal)
    cards = _cardinalities(tokens)
    if not cards or _speaks_of_finiteness(tokens):
        return []
    found: list[Detected] = []
    for first, last, set_start in cards:
        if _satisfied_by_zero(tokens, first, last) and not _finite_by_type(tokens, set_start):
            found.append(_finding(tokens, first, last))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _cardinalities(tokens: Tokens) -> list[tuple[int, int, int]]:
    """(first token, last token, set's first token) of each `Set.ncard s`, `Nat.card s`,
    `s.ncard`, `{...}.ncard` and `(...).ncard`."""
    texts, found = tokens.texts, []
    for index in tokens.positions(PREFIX_CARDS):
        if index + 1 < len(texts):
            found.append((index, tokens.group_end(index + 1) - 1, index + 1))
    for index in tokens.positions(_SUFFIX_CARD):
        if index >= 2 and texts[index - 1] == "." and texts[index - 2] in CLOSERS:
            opener = _opener_of(tokens, index - 2)
            found.append((opener, index, opener))
    dotted = compress(range(len(texts)), map(methodcaller("endswith", ".ncard"), texts))
    found.extend((index, index, index) for index in dotted if texts[index] != "Set.ncard")
    return found


def _opener_of(tokens: Tokens, closer: int) -> int:
    """The opener that `closer` closes (the first token at its depth before it)."""
    openers = tokens.positions_by_depth(OPENERS).get(tokens.depths[closer] + 1, [])
    found = bisect_left(openers, closer) - 1
    return openers[found] if found >= 0 else closer


def _speaks_of_finiteness(tokens: Tokens) -> bool:
    return any(part in text for text in set(tokens.texts) for part in _FINITENESS)


def _satisfied_by_zero(tokens: Tokens, first: int, last: int) -> bool:
    texts = tokens.texts
    after = texts[last + 1] if last + 1 < len(texts) else ""
    after_next = texts[last + 2] if last + 2 < len(texts) else ""
    before = texts[first - 1] if first else ""
    before_previous = texts[first - 2] if first >= 2 else ""
    if after in _UPPER_AFTER or before in _UPPER_BEFORE:
        return True
    if (after, after_next) == ("=", "0") or (before_previous, before) == ("0", "="):
        return True
    return before == "Even" or (before == "(" and before_previous == "Even")


def _finite_by_type(tokens: Tokens, set_start: int) -> bool:
    """`{x : Fin n | ...}`, `{f : Fin 5 → Fin 5 | ...}`: a set-builder over a finite type."""
    texts = tokens.texts
    if texts[set_start] != "{" or set_start + 3 >= len(texts) or texts[set_start + 2] != ":":
        return False
    return texts[set_start + 3] in _FINITE_TYPES


def _finding(tokens: Tokens, first: int, last: int) -> Detected:
    message = (
        "this `ncard`/`Nat.card` is 0 for an infinite set, so the claim holds for infinitely "
        "many elements too; add a finiteness hypothesis (`S.Finite`) or count with "
        "`Set.encard`."
    )
    return Detected(message, token_span(tokens, "formal", first, last))
