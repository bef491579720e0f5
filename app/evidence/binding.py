"""Which names a Lean text binds somewhere, scope ignored.

Binding positions known here: declaration names and binders (`(a b : T)`, bare `(n)`,
`{k}`), any `(x : T)` / `(α := T)` group, the names after a binder keyword
(`∀ x y ∈ S,`, `fun (a, b) =>`, `∑ k in s,`, `let x :=`, `∃ S : Finset ℕ,`), set-builder
and subtype braces (`{x | ...}`, `{f x | x ∈ S}`, `{x // p x}`), match patterns
`| ⟨a, b⟩ =>`, `if h : c`, universe names, structure fields and `where` definitions
(`carrier : T`, `Adj x y := ...`), and names declared by `notation "n" => ...`.
Collecting too many names can only hide a finding, never invent one.
"""

from __future__ import annotations

import re

from app.evidence.declaration import DECLARATION_KEYWORDS, binder_groups, binder_names
from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Token, Tokens

_BINDER_KEYWORDS = frozenset(
    [
        "∀",
        "∃",
        "∃!",
        "∀ᶠ",
        "∃ᶠ",
        "fun",
        "λ",
        "∑",
        "∏",
        "⋃",
        "⋂",
        "⨆",
        "⨅",
        "∫",
        "∮",
        "⨍",
        "Σ",
        "Π",
        "∐",
        "let",
        "letI",
        "have",
        "haveI",
        "obtain",
        "for",
    ]
)
_KEYWORD_STOPS = frozenset(
    [",", "=>", "↦", ":", ":=", "∈", "∉", "in", "<", ">", "≤", "≥", "≠", "⊆", "⊂", "|"]
)
_PATTERN_ABORTS = frozenset(["|", ":=", "=", "fun", "λ"])
_FIELD_CONTEXTS = frozenset({"where", "{"})
_NOTATION = re.compile(r'notation[^\n"]*"([^"\n]+)"')
# Binder lists and patterns are short; a bounded look-ahead keeps hostile input linear.
WINDOW = 64


def notation_names(source: str) -> set[str]:
    """Names a `notation "n" => ...` line declares (read from raw source: they are strings)."""
    return {match.group(1).strip() for match in _NOTATION.finditer(source)}


def bound_names(tokens: Tokens) -> set[str]:
    bound: set[str] = set()
    for index, token in enumerate(tokens.items):
        # Every rule but `_field` binds nothing unless the token is one of its triggers.
        if token.text in _TRIGGERS:
            for rule in _TRIGGERED_RULES:
                bound |= rule(tokens, index)
        if token.kind is Kind.IDENT:
            bound |= _field(tokens, index)
    return bound


def _declaration(tokens: Tokens, index: int) -> set[str]:
    text = tokens.items[index].text
    if text not in DECLARATION_KEYWORDS:
        return set()
    names = _signature_names(tokens, index + 1)
    return names | _constructors(tokens.items, index + 1) if text == "inductive" else names


def _constructors(items: list[Token], start: int) -> set[str]:
    """`inductive T | a | b (n : ℕ)`: the names right after each `|`, up to the next command."""
    names: set[str] = set()
    for index in range(start, len(items) - 1):
        if items[index].text in DECLARATION_KEYWORDS:
            break
        if items[index].text == "|":
            names |= _leading_names(items, index + 1)
    return names


def _field(tokens: Tokens, index: int) -> set[str]:
    return _signature_names(tokens, index) if _starts_field(tokens, index) else set()


def _group(tokens: Tokens, index: int) -> set[str]:
    return _group_binder(tokens, index) if tokens.items[index].text in OPENERS else set()


def _keyword(tokens: Tokens, index: int) -> set[str]:
    if tokens.items[index].text not in _BINDER_KEYWORDS:
        return set()
    return _keyword_binder(tokens.items, index + 1)


def _pattern(tokens: Tokens, index: int) -> set[str]:
    return _match_pattern(tokens.items, index + 1) if tokens.items[index].text == "|" else set()


def _universe(tokens: Tokens, index: int) -> set[str]:
    if tokens.items[index].text not in ("Type", "Sort", "universe"):
        return set()
    return _leading_names(tokens.items, index + 1)


def _if_colon(tokens: Tokens, index: int) -> set[str]:
    """`if h : c then` binds `h`."""
    if tokens.items[index].text == "if" and _colon_follows(tokens, index + 1):
        return {tokens.items[index + 1].text}
    return set()


_TRIGGERED_RULES = (_declaration, _group, _keyword, _pattern, _universe, _if_colon)
_TRIGGERS = frozenset(
    [*DECLARATION_KEYWORDS, *OPENERS, *_BINDER_KEYWORDS, "|", "Type", "Sort", "universe", "if"]
)


def _signature_names(tokens: Tokens, start: int) -> set[str]:
    """`name`s then bracket groups: `theorem foo (a : T)`, `mem {s t} : ...`, `Adj x y :=`."""
    names = _leading_names(tokens.items, start)
    for begin, end in binder_groups(tokens, start + len(names)):
        names.update(_group_names(tokens, begin, end))
    return names


def _group_names(tokens: Tokens, begin: int, end: int) -> tuple[str, ...]:
    return binder_names(tokens.items[begin : min(end, begin + WINDOW)])


def _starts_field(tokens: Tokens, index: int) -> bool:
    """`carrier : T` or `r n1 n2 := ...` first on its line or right after `where` / `{`."""
    token = tokens.items[index]
    if token.kind is not Kind.IDENT:
        return False
    previous = tokens.items[index - 1] if index else None
    fresh = previous is None or previous.line != token.line or previous.text in _FIELD_CONTEXTS
    return fresh and _colon_follows(tokens, index)


def _colon_follows(tokens: Tokens, index: int) -> bool:
    """Names from `index`, then bracket groups, then `:` or `:=`."""
    items = tokens.items
    names = _leading_names(items, index)
    if not names:
        return False
    groups = binder_groups(tokens, index + len(names))
    after = groups[-1][1] if groups else index + len(names)
    return after < len(items) and items[after].text in (":", ":=")


def _leading_names(items: list[Token], start: int) -> set[str]:
    names: set[str] = set()
    for token in items[start : start + WINDOW]:
        if token.kind is not Kind.IDENT:
            break
        names.add(token.text)
    return names


def _idents(items: list[Token]) -> set[str]:
    return {token.head for token in items if token.kind is Kind.IDENT}


def _group_binder(tokens: Tokens, start: int) -> set[str]:
    """`(x y : T)`, `(α := T)`, or braces: `{x : T | ...}`, `{f x | x ∈ S}`, `{x // p}`."""
    items = tokens.items
    end = tokens.group_end(start)
    if items[start].text == "{":
        bar = _top_level_bar(items, start, end)
        if bar is not None:
            left = items[start + 1 : bar]
            if all(token.kind is Kind.IDENT for token in left):
                return _idents(left)
            return _idents(left) | _leading_names(items, bar + 1)  # the image form
    names = _leading_names(items, start + 1)
    after = start + 1 + len(names)
    return names if after < end and items[after].text in (":", ":=") else set()


def _top_level_bar(items: list[Token], start: int, end: int) -> int | None:
    depth = 0
    for index in range(start, min(end, start + WINDOW)):
        text = items[index].text
        depth += (text in OPENERS) - (text in CLOSERS)
        if depth == 1 and text in ("|", "//"):
            return index
    return None


def _keyword_binder(items: list[Token], start: int) -> set[str]:
    """Every name after a binder keyword up to its `,`/`=>`/`:`/`∈`... at its own depth."""
    depth, names = 0, set()
    for token in items[start : start + WINDOW]:
        depth += (token.text in OPENERS) - (token.text in CLOSERS)
        if depth < 0 or (depth == 0 and token.text in _KEYWORD_STOPS):
            break
        if token.kind is Kind.IDENT:
            names.add(token.head)
    return names


def _match_pattern(items: list[Token], start: int) -> set[str]:
    """The names of `| pattern =>`; nothing when no `=>` ends it."""
    depth = 0
    for index in range(start, min(len(items), start + WINDOW)):
        text = items[index].text
        depth += (text in OPENERS) - (text in CLOSERS)
        if depth < 0 or (depth == 0 and text in _PATTERN_ABORTS):
            return set()
        if depth == 0 and text == "=>":
            return _idents(items[start:index])
    return set()
