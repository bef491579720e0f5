"""Lint `shadowed_binder`: a theorem binder re-declared while both copies are in use.

From the labelled data: `(n : ℤ) (h₁ : s = n ^ 2 - 2 ^ n + 1) (n) (_ : n = 3)` - the
second `(n)` is a fresh variable, so `n = 3` no longer constrains the `n` in `s`.
Fires only when the name is used between the two declarations *and* after the second,
so harmless repeats (two hypotheses both called `h₀`, an unused `{X : Type*}` declared
again) stay silent.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from app.evidence.declaration import Declaration, main_theorem
from app.evidence.lean_source import Kind, lean_tokens
from app.vocabulary import Pair


def find_shadowed_binder(pair: Pair) -> list[str]:
    theorem = main_theorem(lean_tokens(pair.formal))
    if theorem is None:
        return []
    uses = _uses(theorem)
    found: dict[str, None] = {}
    declared: dict[str, int] = {}  # name -> index of the binder that last declared it
    for position, binder in enumerate(theorem.binders):
        for name in binder.names:
            first = declared.get(name)
            if first is not None and _used_on_both_sides(uses.get(name, []), first, position):
                found.setdefault(name)
            declared[name] = position
    return [_message(name) for name in found]


def _uses(theorem: Declaration) -> dict[str, list[int]]:
    """For each name, the (sorted) positions using it: binder index, or the conclusion's."""
    parts = [binder.type for binder in theorem.binders] + [theorem.conclusion]
    uses: dict[str, list[int]] = {}
    for position, tokens in enumerate(parts):
        for token in tokens:
            if token.kind is Kind.IDENT:
                places = uses.setdefault(token.head, [])
                if not places or places[-1] != position:
                    places.append(position)
    return uses


def _used_on_both_sides(places: list[int], first: int, second: int) -> bool:
    """Used strictly between binders `first` and `second`, and again from `second` on."""
    between = bisect_left(places, second) - bisect_right(places, first)
    return between > 0 and bisect_left(places, second) < len(places)


def _message(name: str) -> str:
    return (
        f"`{name}` is declared again after a hypothesis already used it, so later mentions "
        f"of `{name}` are about a new variable, unrelated to the earlier one"
    )
