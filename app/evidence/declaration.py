"""The shape of a Lean declaration: its binders and its conclusion, from tokens.

Approximate by design: it knows bracketed binders `(a b : T)`, `{α : Type*}`, `[Ring R]`,
`⦃x⦄` and bare `(n)`, then a `:` and the conclusion up to `:=`. That is how every
statement in the shared data is written.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Token, Tokens

THEOREM_KEYWORDS = frozenset({"theorem", "lemma", "example"})
DECLARATION_KEYWORDS = THEOREM_KEYWORDS | {
    "def",
    "abbrev",
    "instance",
    "structure",
    "inductive",
    "class",
    "axiom",
}


@dataclass(frozen=True, slots=True)
class Binder:
    names: tuple[str, ...]
    type: tuple[Token, ...]  # empty for a bare binder such as `(n)`
    bracket: str


@dataclass(frozen=True, slots=True)
class Declaration:
    keyword: str
    binders: tuple[Binder, ...]
    conclusion: tuple[Token, ...]


def main_theorem(tokens: Tokens) -> Declaration | None:
    """The last theorem, lemma or example: the statement a pair is about."""
    starts = [i for i, token in enumerate(tokens.items) if token.text in THEOREM_KEYWORDS]
    return read_declaration(tokens, starts[-1]) if starts else None


def read_declaration(tokens: Tokens, start: int) -> Declaration:
    """The declaration whose keyword is at `start`: binder groups, then `:` and conclusion."""
    items = tokens.items
    index = start + 1
    if index < len(items) and items[index].kind is Kind.IDENT:
        index += 1  # the declaration's name
    groups = binder_groups(tokens, index)
    index = groups[-1][1] if groups else index
    binders = tuple(read_binder(items[begin:end]) for begin, end in groups)
    conclusion: tuple[Token, ...] = ()
    if index < len(items) and items[index].text == ":":
        conclusion = tuple(_up_to_definition(items, index + 1))
    return Declaration(items[start].text, binders, conclusion)


def binder_groups(tokens: Tokens, index: int) -> list[tuple[int, int]]:
    """(start, end) of each bracket group following one another from `index`."""
    groups: list[tuple[int, int]] = []
    while index < len(tokens.items) and tokens.items[index].text in OPENERS:
        groups.append((index, tokens.group_end(index)))
        index = groups[-1][1]
    return groups


def read_binder(group: list[Token]) -> Binder:
    """One bracketed binder group, brackets included."""
    names = binder_names(group)
    colon = 1 + len(names)
    if names and colon < len(group) and group[colon].text == ":":
        closed = group[-1].text in CLOSERS
        return Binder(names, tuple(group[colon + 1 : -1 if closed else None]), group[0].text)
    return Binder(names, (), group[0].text)


def binder_names(group: list[Token]) -> tuple[str, ...]:
    """The names a group binds: `(a b : T)` -> a, b; bare `(n)` -> n; `[Ring R]` -> none."""
    names: list[str] = []
    for token in group[1:]:
        if token.kind is not Kind.IDENT:
            break
        names.append(token.text)
    after = group[1 + len(names)].text if 1 + len(names) < len(group) else ""
    if after == ":" or (after in CLOSERS and group[0].text != "["):
        return tuple(names)
    return ()


def _up_to_definition(items: list[Token], start: int) -> list[Token]:
    depth, taken = 0, []
    for token in items[start:]:
        depth += (token.text in OPENERS) - (token.text in CLOSERS)
        if depth <= 0 and (token.text == ":=" or token.text in DECLARATION_KEYWORDS):
            break
        taken.append(token)
    return taken
