"""Lint `big_operator_scope`: a `∑`/`∏` binder used after the operator's body has ended.

Mathlib parses the body of `∑ x ∈ s, body` (and `in`, `:`, or no domain) at precedence 67,
so a top-level `+` or `-` ends it: `∏ k ∈ s, 1 + 1 / 2 ^ k` is `(∏ k ∈ s, 1) + 1 / 2 ^ k`,
and that last `k` is no longer the binder. Lean then binds it elsewhere (an outer `k`, or
a fresh auto-bound variable), so the statement changes meaning. Fires only when the
binder's name reappears after the `+`/`-`, inside the same bracket and comparison.

Linear: every scan asks `Tokens.level_end` where its bracket level stops instead of
walking it, what follows a body's end is read once however many operators share it, and
an operator whose binder names hold another operator (`∑ ∑ k, ...`, not Lean) is skipped,
so the binder parts read are disjoint. Skipping can only miss an escape, never invent one.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress

from app.evidence.finding import Detected
from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

BIG_OPERATORS = frozenset({"∑", "∏"})
# A binder list ends at the first of these; the body starts after the `,`.
_BINDER_ENDS = frozenset({",", "in", "∈", ":", "<", "≤", "∣"})
# These end the expression the operator is part of (comparisons, connectives, ...).
_EXPRESSION_ENDS = frozenset(
    [
        ",",
        ":=",
        ":",
        "=",
        "≠",
        "<",
        ">",
        "≤",
        "≥",
        "∣",
        "∧",
        "∨",
        "→",
        "↔",
        "∈",
        "∉",
        "⊆",
        "|",
        "then",
        "else",
        "≡",
        "[",
    ]
)
_ABSORBING_STARTS = frozenset(["if", "match", "fun", "λ", "let", "have", "∀", "∃"])
_NESTED_BINDERS = frozenset(["∑", "∏", "∀", "∃", "fun", "λ", "⋃", "⋂"])
_OPERAND_ENDS = frozenset([")", "]", "}", "⟩", "!", "ᶜ", "¹", "'"])  # `x⁻¹` ends in `¹`
_COMMA = frozenset([","])
_PLUS_MINUS = frozenset(["+", "-"])
# `[` opens a bracket, so no scan ever meets it at its own level: `level_end` takes no brackets.
_EXPRESSION_STOPS = _EXPRESSION_ENDS - OPENERS
_BODY_STOPS = _EXPRESSION_STOPS | _PLUS_MINUS
_MARKERS = OPENERS | {":"}  # the last of these before a binder name says if it is typed
_BINDER_CUTS = _BINDER_ENDS | CLOSERS
# Binders and bodies of statement-sized sums are short: scans stop this many tokens on.
WINDOW = 256
MAX_FINDINGS = 5


def find_big_operator_scope(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    operators = tokens.positions(BIG_OPERATORS)
    scan = _Scan(tokens)
    found: dict[str, Detected] = {}  # one finding per message, at its first escape
    for number, index in enumerate(operators):
        following = operators[number + 1] if number + 1 < len(operators) else len(tokens)
        for message, name, body_end in scan.escapes(index, following):
            if message not in found:  # the name occurs within WINDOW tokens of the body
                use = tokens.heads().index(name, body_end + 1)
                found[message] = Detected(message, token_span(tokens, "formal", use, use))
        if len(found) >= MAX_FINDINGS:
            break  # later messages could only come after these
    return list(found.values())[:MAX_FINDINGS]


class _Scan:
    """The scans of one token list, remembering what operators share."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens
        self._names_end: tuple[int, int, int] = (-1, -1, -1)  # depth, operator, its end
        self._body_ends: dict[int, int | None] = {}
        self._after: dict[int, dict[str, int]] = {}

    def escapes(self, start: int, following: int) -> list[tuple[str, str, int]]:
        """Messages for the operator at `start` (`following`: the next operator's index),
        each with the escaping name and where the body ends."""
        texts = self.tokens.texts
        names_end = self._binder_names_end(start, following)
        if names_end is None:
            return []
        comma = names_end
        if texts[comma] != ",":
            comma = self.tokens.level_end(names_end, _COMMA)
            if comma >= min(len(texts), start + 1 + WINDOW) or texts[comma] != ",":
                return []
        names = self._names(start + 1, names_end)
        body_end = self._body_end(comma + 1) if names else None
        if body_end is None:
            return []
        after = self._names_after(body_end + 1)
        return [
            (_message(texts[start], name, texts[body_end]), name, body_end)
            for name in sorted(names.intersection(after), key=after.__getitem__)
        ]

    def _binder_names_end(self, start: int, following: int) -> int | None:
        """Where the operator's binder names end (its first `,`/`∈`/`:`/... at its level),
        or None: no `,` can follow within the window, or another operator comes first."""
        tokens = self.tokens
        cuts = tokens.positions(_BINDER_CUTS)
        first_cut = bisect_left(cuts, start)
        if first_cut == len(cuts) or cuts[first_cut] > following:
            return None  # no stop, not even a bracket closing, before the next operator
        depth, previous, end = self._names_end
        if not (depth == tokens.depths[start] and previous < start < end):
            end = tokens.level_end(start + 1, _BINDER_ENDS)
            self._names_end = (tokens.depths[start], start, end)
        if end >= min(len(tokens), start + 1 + WINDOW) or tokens.texts[end] not in _BINDER_ENDS:
            return None
        return None if following < end else end

    def _names(self, start: int, end: int) -> set[str]:
        """The binder names (`k`, `(k : ℕ)`, `⟨a, b⟩`): identifiers in `start:end` but
        those after a `:` (up to the next bracket opening)."""
        tokens, names = self.tokens, set[str]()
        texts, idents = tokens.texts, tokens.idents()
        markers = tokens.positions(_MARKERS)
        cut, typed = start, False
        for marker in [*markers[bisect_left(markers, start) : bisect_left(markers, end)], end]:
            if not typed:
                names.update(compress(texts[cut:marker], idents[cut:marker]))
            if marker < end:
                cut, typed = marker + 1, texts[marker] == ":"
        return names

    def _body_end(self, start: int) -> int | None:
        """Index of the top-level binary `+`/`-` that ends the body, or None if none does."""
        if start not in self._body_ends:
            self._body_ends[start] = self._find_body_end(start)
        return self._body_ends[start]

    def _find_body_end(self, start: int) -> int | None:
        tokens, texts = self.tokens, self.tokens.texts
        if start < len(texts) and texts[start] in _ABSORBING_STARTS:
            return None  # `if c then a else b`, `fun x => a + b`: the keyword takes it all
        limit, at = min(len(texts), start + WINDOW), start
        while (found := tokens.level_end(at, _BODY_STOPS)) < limit:
            if texts[found] not in _PLUS_MINUS:
                return None  # the expression or its bracket ended first
            if found > start and _ends_operand(tokens, found - 1):
                return found
            at = found + 1  # a sign, not an operator: `* -x`
        return None

    def _names_after(self, start: int) -> dict[str, int]:
        """The heads of the identifiers from `start` until the enclosing expression ends,
        each with its rank by first occurrence.

        A nested binder (`∑ k ∈ t, ...`, `∀ k, ...`) may bind the name again: the rest of
        its bracket is skipped, which can only miss an escape, never invent one.
        """
        if start not in self._after:
            self._after[start] = {name: rank for rank, name in enumerate(self._heads_after(start))}
        return self._after[start]

    def _heads_after(self, start: int) -> dict[str, None]:
        tokens = self.tokens
        heads, idents = tokens.heads(), tokens.idents()
        limit = min(tokens.level_end(start, _EXPRESSION_STOPS), start + WINDOW, len(tokens))
        binders, base = tokens.positions(_NESTED_BINDERS), tokens.depth_before(start)
        seen: dict[str, None] = {}
        at = start
        while at < limit:
            found = bisect_left(binders, at)
            binder = min(binders[found] if found < len(binders) else limit, limit)
            end = min(binder + 1, limit)  # the binder itself counts (`fun` is a name)
            seen.update(dict.fromkeys(compress(heads[at:end], idents[at:end])))
            if binder >= limit or tokens.depths[binder] == base:
                break  # at the expression's own level a binder takes all the rest
            at = tokens.level_close(binder + 1) + 1  # past the bracket around the binder
        return seen


def _ends_operand(tokens: Tokens, index: int) -> bool:
    """A `+`/`-` is binary only after an operand (not at the body's start, not `* -x`)."""
    return tokens.kinds[index] is not Kind.SYMBOL or tokens.texts[index] in _OPERAND_ENDS


def _message(symbol: str, name: str, operator: str) -> str:
    return (
        f"the body of `{symbol} {name} ...` ends at a top-level `{operator}`, so the later "
        f"`{name}` is outside the {symbol}; parenthesise the body: `{symbol} {name} ∈ s, (a + b)`"
    )
