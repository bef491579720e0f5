"""Lint `big_operator_scope`: a `∑`/`∏` binder used after the operator's body has ended.

Mathlib parses the body of `∑ x ∈ s, body` (and `in`, `:`, or no domain) at precedence 67,
so a top-level `+` or `-` ends it: `∏ k ∈ s, 1 + 1 / 2 ^ k` is `(∏ k ∈ s, 1) + 1 / 2 ^ k`,
and that last `k` is no longer the binder. Lean then binds it elsewhere (an outer `k`, or
a fresh auto-bound variable), so the statement changes meaning. Fires only when the
binder's name reappears after the `+`/`-`, inside the same bracket and comparison.
"""

from __future__ import annotations

from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Token, Tokens, lean_tokens
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
# Binders and bodies of statement-sized sums are short; bounded scans keep this linear.
WINDOW = 256
MAX_FINDINGS = 5


def find_big_operator_scope(pair: Pair) -> list[str]:
    tokens = lean_tokens(pair.formal)
    found: list[str] = []
    for index, token in enumerate(tokens.items):
        if token.text in BIG_OPERATORS:
            found.extend(_escapes(tokens, index))
    return list(dict.fromkeys(found))[:MAX_FINDINGS]


def _escapes(tokens: Tokens, start: int) -> list[str]:
    names, comma = _binder(tokens.items, start + 1)
    if comma is None or not names:
        return []
    body_end = _body_end(tokens.items, comma + 1)
    if body_end is None:
        return []
    symbol = tokens.items[start].text
    return [
        _message(symbol, name, tokens.items[body_end].text)
        for name in _names_after(tokens.items, body_end + 1, names)
    ]


def _binder(items: list[Token], start: int) -> tuple[set[str], int | None]:
    """The binder names (`k`, `(k : ℕ)`, `⟨a, b⟩`) and the index of the body's comma."""
    names: set[str] = set()
    depth, in_names = 0, True
    for index in range(start, min(len(items), start + WINDOW)):
        text = items[index].text
        depth += (text in OPENERS) - (text in CLOSERS)
        if depth < 0:
            return names, None
        if depth == 0 and text == ",":
            return names, index
        if depth == 0 and text in _BINDER_ENDS:
            in_names = False  # the domain follows: `in s`, `∈ s`, `: T`, `< n`
        elif in_names and items[index].kind is Kind.IDENT and not _typed(items[start:index]):
            names.add(items[index].text)
    return names, None


def _typed(before: list[Token]) -> bool:
    """True inside the type part of `(k : ℕ)`: a `:` since the group's opening."""
    for token in reversed(before):
        if token.text == ":":
            return True
        if token.text in OPENERS:
            return False
    return False


def _body_end(items: list[Token], start: int) -> int | None:
    """Index of the top-level binary `+`/`-` that ends the body, or None if none does."""
    if start < len(items) and items[start].text in _ABSORBING_STARTS:
        return None  # `if c then a else b`, `fun x => a + b`: the keyword takes it all
    depth = 0
    for index in range(start, min(len(items), start + WINDOW)):
        text = items[index].text
        depth += (text in OPENERS) - (text in CLOSERS)
        if depth < 0 or (depth == 0 and text in _EXPRESSION_ENDS):
            return None
        if depth == 0 and text in ("+", "-") and _ends_operand(items[index - 1], index > start):
            return index
    return None


def _ends_operand(previous: Token, inside_body: bool) -> bool:
    """A `+`/`-` is binary only after an operand (not at the body's start, not `* -x`)."""
    return inside_body and (previous.kind is not Kind.SYMBOL or previous.text in _OPERAND_ENDS)


def _names_after(items: list[Token], start: int, names: set[str]) -> list[str]:
    """Binder names that occur from `start` until the enclosing expression ends.

    A nested binder (`∑ k ∈ t, ...`, `∀ k, ...`) may bind the name again: the rest of
    its bracket is skipped, which can only miss an escape, never invent one.
    """
    depth, seen, skip_below = 0, [], None
    for token in items[start : start + WINDOW]:
        depth += (token.text in OPENERS) - (token.text in CLOSERS)
        if depth < 0 or (depth == 0 and token.text in _EXPRESSION_ENDS):
            break
        if skip_below is not None and depth >= skip_below:
            continue
        skip_below = depth if token.text in _NESTED_BINDERS else None
        if token.kind is Kind.IDENT and token.head in names and token.head not in seen:
            seen.append(token.head)
    return seen


def _message(symbol: str, name: str, operator: str) -> str:
    return (
        f"the body of `{symbol} {name} ...` ends at a top-level `{operator}`, so the later "
        f"`{name}` is outside the {symbol}; parenthesise the body: `{symbol} {name} ∈ s, (a + b)`"
    )
