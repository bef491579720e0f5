"""Lint `unused_variable`: a theorem binder of a number, function, set or other data type
that nothing in the statement uses.

A statement that declares `(a b M : ℝ)` and then never writes `b` says nothing about
`b`: a term the informal text has (`h = a ∂h/∂x + b ∂h/∂y`) was dropped on the way
(PutnamBench `putnam_2010_a3` before its fix a414636, `putnam_1977_a3` before 245ca3a).
A hypothesis is never reported (its name is not meant to be used), nor an implicit or
instance binder (`{α : Type*}`, `[Group G]`), nor a name starting with `_`. A data binder
is one whose type starts with a number type or a type former (`ℝ`, `ℕ → ℝ`, `Set ℕ`,
`Fin n → ℝ`, `Polynomial ℤ`) and holds no relation or connective (`=`, `<`, `∧`, `∀`, …),
so `(h : ℕ → 0 < 1)` is a hypothesis. Linear: every identifier is counted once, and each
binder's type is read once.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress

from app.evidence.declaration import Binder, main_theorem
from app.evidence.finding import Detected
from app.evidence.lean_source import Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
# The first token of a data type: number types and the type formers statements use.
_DATA_HEADS = frozenset(
    [
        "ℕ",
        "ℤ",
        "ℚ",
        "ℝ",
        "ℂ",
        "ℕ+",
        "ℕ∞",
        "ℝ≥0",
        "ℝ≥0∞",
        "ENNReal",
        "NNReal",
        "EReal",
        "Fin",
        "ZMod",
        "Set",
        "Finset",
        "Multiset",
        "List",
        "Polynomial",
        "MvPolynomial",
        "Matrix",
        "EuclideanSpace",
    ]
)
# A type holding one of these is a proposition: the binder is a hypothesis.
_PROPOSITION = frozenset(
    ["=", "≠", "<", "≤", ">", "≥", "∣", "∈", "∉", "⊆", "∀", "∃", "∃!", "∧", "∨", "↔", "¬"]
)


def find_unused_variable(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    theorem = main_theorem(tokens)
    if theorem is None:
        return []
    candidates = [binder for binder in theorem.binders if _is_data(tokens, binder)]
    if not candidates:
        return []
    # Every identifier of the text, the declarations included: a name written once is
    # written only where it is declared.
    uses = Counter(compress(tokens.heads(), tokens.idents()))
    found: list[Detected] = []
    for binder in candidates:
        for position, name in enumerate(binder.names):
            if uses[name] == 1 and not name.startswith("_"):
                found.append(_finding(tokens, binder, position, name))
                if len(found) == MAX_FINDINGS:
                    return found
    return found


def _is_data(tokens: Tokens, binder: Binder) -> bool:
    """An explicit binder `(x : T)` whose type `T` is data, not a proposition."""
    if binder.bracket != "(" or not binder.type or not binder.names:
        return False
    texts = tokens.texts[binder.type.start : binder.type.stop]
    return texts[0] in _DATA_HEADS and not any(map(_PROPOSITION.__contains__, texts))


def _finding(tokens: Tokens, binder: Binder, position: int, name: str) -> Detected:
    # `(a b M : ℝ)`: the names stand just before the `:` that starts the type.
    index = binder.type.start - 1 - len(binder.names) + position
    at = index if 0 <= index < len(tokens) and tokens.texts[index] == name else -1
    message = (
        f"`{name}` is declared but nothing in the statement uses it, so the statement says "
        f"nothing about `{name}`; a term or hypothesis of the informal text that mentions it "
        "may have been dropped."
    )
    return Detected(message, token_span(tokens, "formal", at, at) if at >= 0 else None)
