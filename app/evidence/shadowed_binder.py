"""Lint `shadowed_binder`: a theorem binder re-declared while both copies are in use.

From the labelled data: `(n : ℤ) (h₁ : s = n ^ 2 - 2 ^ n + 1) (n) (_ : n = 3)` - the
second `(n)` is a fresh variable, so `n = 3` no longer constrains the `n` in `s`.
Fires only when the name is used between the two declarations *and* after the second,
so harmless repeats (two hypotheses both called `h₀`, an unused `{X : Type*}` declared
again) stay silent.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections import Counter
from itertools import compress, repeat

from app.evidence.declaration import Binder, Declaration, main_theorem
from app.evidence.finding import Detected, Span
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5


def find_shadowed_binder(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    theorem = main_theorem(tokens)
    if theorem is None:
        return []
    declarations = Counter(name for binder in theorem.binders for name in binder.names)
    uses = _uses(tokens, theorem, {name for name, count in declarations.items() if count > 1})
    found: dict[str, Span | None] = {}  # name -> where it is declared again
    declared: dict[str, int] = {}  # name -> index of the binder that last declared it
    for position, binder in enumerate(theorem.binders):
        for name in binder.names:
            first = declared.get(name)
            if first is not None and _used_on_both_sides(uses.get(name, []), first, position):
                found.setdefault(name, _declared_at(tokens, binder, name))
            declared[name] = position
    return [Detected(_message(name), span) for name, span in list(found.items())[:MAX_FINDINGS]]


def _declared_at(tokens: Tokens, binder: Binder, name: str) -> Span | None:
    """The token of `name` in `binder`, whose names follow its opener: a bare `(n)`'s
    empty type starts at the opener, a typed one's two tokens past the names."""
    offset = 1 + binder.names.index(name)
    for opener in (binder.type.start - len(binder.names) - 2, binder.type.start):
        index = opener + offset
        if 0 <= index < len(tokens) and tokens.texts[index] == name:
            return token_span(tokens, "formal", index, index)
    return None


def _uses(tokens: Tokens, theorem: Declaration, names: set[str]) -> dict[str, list[int]]:
    """For each of `names`, the (sorted) positions using it: binder index, or the
    conclusion's. Only the uses of `names` are visited."""
    if not names:
        return {}
    parts = [binder.type for binder in theorem.binders] + [theorem.conclusion]
    starts, stops = [part.start for part in parts], [part.stop for part in parts]
    low, high = starts[0], theorem.conclusion.stop
    heads, kinds = tokens.heads()[low:high], tokens.kinds[low:high]
    wanted = map(
        operator.and_, map(names.__contains__, heads), map(operator.is_, kinds, repeat(Kind.IDENT))
    )
    hits = list(compress(range(low, high), wanted))
    # Each use's part, found for all uses at once; a use outside any part (a binder's own
    # name, a bracket) is dropped.
    positions = [found - 1 for found in map(bisect_right, repeat(starts), hits)]
    inside = map(operator.lt, hits, map(stops.__getitem__, positions))
    named = zip(map(tokens.heads().__getitem__, hits), positions, strict=True)
    uses: dict[str, list[int]] = {}
    for name, position in dict.fromkeys(compress(named, inside)):  # positions only grow
        uses.setdefault(name, []).append(position)
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
