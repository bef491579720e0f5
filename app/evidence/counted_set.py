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

from app.evidence.declaration import Declaration, main_theorem
from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Token, lean_tokens
from app.vocabulary import Pair

SET_TYPES = frozenset({"Finset", "Set"})
_NOT_ONE_EQUATION = frozenset(["→", "∧", "∨", "↔", "¬", "∀", "∃", "≠", "<", ">", "≤", "≥", "∣"])
_MEASURES = frozenset({"card", "ncard", "encard", "sum", "prod"})
_MEASURE_FUNCTIONS = frozenset(
    {"card", "Finset.card", "Set.ncard", "Set.encard", "Nat.card", "Fintype.card"}
)


def find_counted_set(pair: Pair) -> list[str]:
    theorem = main_theorem(lean_tokens(pair.formal))
    if theorem is None or not _is_one_equation(theorem.conclusion):
        return []
    return [
        _message(name)
        for name in _set_variables(theorem)
        if _measures(theorem.conclusion, name) and not _pinned(theorem, name)
    ]


def _is_one_equation(conclusion: tuple[Token, ...]) -> bool:
    """`lhs = rhs` and nothing else at the top level (no `→`, `∧`, `∃`, `<`, ...)."""
    depth, equals = 0, 0
    for token in conclusion:
        depth += (token.text in OPENERS) - (token.text in CLOSERS)
        if depth == 0 and token.text in _NOT_ONE_EQUATION:
            return False
        equals += depth == 0 and token.text == "="
    if equals == 0 and conclusion and conclusion[0].text == "(":
        return _is_one_equation(conclusion[1:-1])  # `(S.card = 3)`
    return equals == 1


def _set_variables(theorem: Declaration) -> list[str]:
    return [
        name
        for binder in theorem.binders
        if binder.type and binder.type[0].text in SET_TYPES
        for name in binder.names
    ]


def _measures(conclusion: tuple[Token, ...], name: str) -> bool:
    """`S.card`, `card S`, `∑ k ∈ S`, `∑ k in S` somewhere in the conclusion."""
    for index, token in enumerate(conclusion):
        head, _, field = token.text.partition(".")
        if head == name and field in _MEASURES:
            return True
        applied = index + 1 < len(conclusion) and conclusion[index + 1].text == name
        if applied and (
            token.text in _MEASURE_FUNCTIONS or _is_big_operator_domain(conclusion, index)
        ):
            return True
    return False


def _is_big_operator_domain(conclusion: tuple[Token, ...], index: int) -> bool:
    """The `∈`/`in` at `index` follows `∑ k` or `∏ k` (not a membership claim)."""
    is_domain = conclusion[index].text in ("∈", "in")
    return is_domain and index >= 2 and conclusion[index - 2].text in ("∑", "∏")


def _pinned(theorem: Declaration, name: str) -> bool:
    """Some hypothesis uses `name` other than as the domain of `∀ x ∈ S,` / `∃ x : S,`."""
    return any(
        token.kind is Kind.IDENT and token.head == name and not _one_way(binder.type, index)
        for binder in theorem.binders
        for index, token in enumerate(binder.type)
    )


def _one_way(tokens: tuple[Token, ...], index: int) -> bool:
    """`∀ x ∈ S` / `∃ x : S` around `tokens[index]` (which is exactly `S`)."""
    if tokens[index].text != tokens[index].head or index < 3:
        return False  # `S.card` measures S: that constrains it
    return tokens[index - 1].text in ("∈", ":") and tokens[index - 3].text in ("∀", "∃")


def _message(name: str) -> str:
    return (
        f"the conclusion states the size or sum of `{name}`, but the hypotheses only say "
        f"`∀ x ∈ {name}, P x` (or nothing), which any subset satisfies; characterise it "
        f"with `∀ x, x ∈ {name} ↔ P x`"
    )
