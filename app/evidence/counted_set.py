"""Lint `counted_set_underdetermined`: a set whose size or sum is stated but never pinned down.

The pattern behind several maintainers' fixes in the labelled data: a theorem takes a
`(S : Finset ℕ)` (or `Set`), concludes `S.card = 672` or `∑ k ∈ S, k = 24`, but its
hypotheses only say `∀ x ∈ S, P x` (S is *some* subset of the answer set) or nothing at
all. Any smaller S satisfies them, so the equality is false or not what was asked. The
fix is an `↔` characterisation (`∀ x, x ∈ S ↔ P x`) or an equation `S = ...`.
Fires when the conclusion is one equation that measures S (`.card`, `.ncard`, `.encard`,
`card S`, `∑`/`∏` over S) and every hypothesis mentions S only as the domain of a bounded
quantifier (`∀ x ∈ S,`, `∀ x : S,`, `∃ x ∈ S,`) or not at all. Any other use (`S = ...`,
`x ∈ S ↔ ...`, `S.card = 4`, `T ∉ S`) is taken to constrain S: a set described by a
global property ("a set of 4 numbers whose mean ...") is a legitimate hypothesis.
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from itertools import compress, repeat

from app.evidence.declaration import Declaration, main_theorem
from app.evidence.finding import Detected
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

SET_TYPES = frozenset({"Finset", "Set"})
_NOT_ONE_EQUATION = frozenset(["→", "∧", "∨", "↔", "¬", "∀", "∃", "≠", "<", ">", "≤", "≥", "∣"])
_EQUATION_PARTS = _NOT_ONE_EQUATION | {"="}
_MEASURES = frozenset({"card", "ncard", "encard", "sum", "prod"})
_MEASURE_FUNCTIONS = frozenset(
    {"card", "Finset.card", "Set.ncard", "Set.encard", "Nat.card", "Fintype.card"}
)
_DOMAINS = frozenset(["∈", "in"])
_OPEN = frozenset(["("])
MAX_FINDINGS = 5


def find_counted_set(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    theorem = main_theorem(tokens)
    if theorem is None or not _is_one_equation(tokens, theorem.conclusion):
        return []
    measured = _measured(tokens, theorem.conclusion)
    candidates = [name for name in _set_variables(tokens, theorem) if name in measured]
    pinned = _pinned(tokens, theorem, set(candidates))
    # The span is the conclusion (cut at its first line): the equation that is not pinned.
    span = token_span(tokens, "formal", theorem.conclusion.start, theorem.conclusion.stop - 1)
    found = [Detected(_message(name), span) for name in candidates if name not in pinned]
    return found[:MAX_FINDINGS]


def _is_one_equation(tokens: Tokens, conclusion: range) -> bool:
    """`lhs = rhs` and nothing else at the top level (no `→`, `∧`, `∃`, `<`, ...), inside
    any number of redundant parentheses: `((S.card = 3))`.

    Layer k of parentheses is the conclusion without its first and last k tokens, read at
    depth k; the first layer that holds an `=`-like part, is empty or does not open with
    `(` decides. That layer is found from the positions of the parts and of `(`, never by
    peeling one layer at a time: linear in the conclusion, however deep the nesting.
    """
    texts, start, stop = tokens.texts, conclusion.start, conclusion.stop
    base = tokens.depth_before(start)
    parts = _between(tokens.positions(_EQUATION_PARTS), start, stop)
    layer = min(
        _opening_parentheses(tokens, start),
        (stop - start + 1) // 2,
        *(
            depth
            for index in parts
            if (depth := tokens.depths[index] - base) >= 0 and start + depth <= index < stop - depth
        ),
    )
    at_layer = [
        texts[index]
        for index in parts
        if tokens.depths[index] == base + layer and start + layer <= index < stop - layer
    ]
    return len(at_layer) == 1 and at_layer[0] == "="


def _opening_parentheses(tokens: Tokens, start: int) -> int:
    """How many `(` follow one another from `start` (a binary search over their indices)."""
    opens = tokens.positions(_OPEN)
    first = bisect_left(opens, start)
    if first == len(opens) or opens[first] != start:
        return 0
    # opens[first + k] - k == start exactly while the run goes on.
    return bisect_left(range(len(opens) - first), 1, key=lambda k: opens[first + k] - k - start)


def _set_variables(tokens: Tokens, theorem: Declaration) -> list[str]:
    return [
        name
        for binder in theorem.binders
        if binder.type and tokens.texts[binder.type.start] in SET_TYPES
        for name in binder.names
    ]


def _measured(tokens: Tokens, conclusion: range) -> set[str]:
    """The names the conclusion measures: `S.card`, `card S`, `∑ k ∈ S`, `∑ k in S`."""
    texts, start, stop = tokens.texts, conclusion.start, conclusion.stop
    inside = texts[start:stop]
    dotted = compress(inside, map(operator.contains, inside, repeat(".")))
    measured = {
        name for name, _, field in map(str.partition, dotted, repeat(".")) if field in _MEASURES
    }
    for index in _between(tokens.positions(_MEASURE_FUNCTIONS), start, stop - 1):
        measured.add(texts[index + 1])
    for index in _between(tokens.positions(_DOMAINS), start + 2, stop - 1):
        if texts[index - 2] in ("∑", "∏"):
            measured.add(texts[index + 1])
    return measured


def _pinned(tokens: Tokens, theorem: Declaration, names: set[str]) -> set[str]:
    """Those of `names` some hypothesis uses other than as the domain of `∀ x ∈ S,` /
    `∃ x : S,`. Only the uses of `names` are visited."""
    if not names or not theorem.binders:
        return set()
    types = [binder.type for binder in theorem.binders]
    starts = [part.start for part in types]
    low, high = starts[0], types[-1].stop
    heads, kinds = tokens.heads()[low:high], tokens.kinds[low:high]
    uses = map(
        operator.and_, map(names.__contains__, heads), map(operator.is_, kinds, repeat(Kind.IDENT))
    )
    pinned: set[str] = set()
    for index in compress(range(low, high), uses):
        part = types[bisect_right(starts, index) - 1]
        if index < part.stop and not _one_way(tokens, part, index):
            pinned.add(tokens.heads()[index])
    return pinned


def _one_way(tokens: Tokens, part: range, index: int) -> bool:
    """`∀ x ∈ S` / `∃ x : S` around `tokens[index]` (which is exactly `S`) in one binder's
    type."""
    texts = tokens.texts
    if "." in texts[index] or index - part.start < 3:
        return False  # `S.card` measures S: that constrains it
    return texts[index - 1] in ("∈", ":") and texts[index - 3] in ("∀", "∃")


def _between(positions: list[int], low: int, high: int) -> list[int]:
    return positions[bisect_left(positions, low) : bisect_left(positions, high)]


def _message(name: str) -> str:
    return (
        f"the conclusion states the size or sum of `{name}`, but the hypotheses only say "
        f"`∀ x ∈ {name}, P x` (or nothing), which any subset satisfies; characterise it "
        f"with `∀ x, x ∈ {name} ↔ P x`"
    )
