"""The types a statement writes for its names, read from tokens: `(a b : T)`, `∀ x : T,`,
`{p : T | ...}`, and the elements of a set `∀ A ∈ S,` where `S : Set T`.

Approximate, like every lint here: a name's types are the texts after a `:` that follows
it, up to the `)`, `,`, `|` or `:=` ending them, at most `MAX_TYPE_TOKENS` tokens (a longer
type is no point type the lints compare). Scope is ignored: a name declared with two
types has both, and the lints fire only when every one of them says the same thing.
Linear: each `:` and each `∈` is looked at once, and `Tokens.level_end` finds the ends.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from app.evidence.finding import Span
from app.evidence.lean_source import Kind, Tokens

MAX_TYPE_TOKENS = 24
MAX_NAMES = 16  # names looked back for before one `:`
# A name written with more distinct types than this is no point a lint can type (and the
# lints compare each use with every type of its name, so the bound keeps them linear).
MAX_TYPES_PER_NAME = 8
_TYPE_STOPS = frozenset([",", ":=", "|", ":"])
_COLON = frozenset([":"])
_MEMBER = frozenset(["∈"])
_BINDERS = frozenset(["∀", "∃", "∃!"])
TypeText = tuple[str, ...]
UNKNOWN: TypeText = ("?",)


def declared_types(tokens: Tokens) -> dict[str, list[TypeText]]:
    """Every name written before a `:`, with the type texts written after it."""
    texts, kinds = tokens.texts, tokens.kinds
    types: dict[str, list[TypeText]] = {}
    for colon in tokens.positions(_COLON):
        if colon == 0 or kinds[colon - 1] is not Kind.IDENT:
            continue
        end = tokens.level_end(colon + 1, _TYPE_STOPS)
        if end - colon - 1 > MAX_TYPE_TOKENS:
            continue
        type_text = tuple(texts[colon + 1 : end])
        previous = bisect_left(tokens.non_idents, colon) - 1
        first = max(colon - MAX_NAMES, tokens.non_idents[previous] + 1 if previous >= 0 else 0)
        for name in texts[first:colon]:
            _add(types, name, type_text)
    return types


def _add(types: dict[str, list[TypeText]], name: str, type_text: TypeText) -> None:
    """One more type for `name`, once; past `MAX_TYPES_PER_NAME` types, `name` has an
    unknown type (the `("?",)` no lint matches)."""
    written = types.setdefault(name, [])
    if type_text in written or written == [UNKNOWN]:
        return
    if len(written) >= MAX_TYPES_PER_NAME:
        written[:] = [UNKNOWN]
    else:
        written.append(type_text)


def member_types(tokens: Tokens, types: dict[str, list[TypeText]]) -> dict[str, list[TypeText]]:
    """Names bound as elements, `∀ A ∈ S,` / `∃ P ∈ S,`, typed by `S : Set T` (or Finset)."""
    texts = tokens.texts
    found: dict[str, list[TypeText]] = {}
    for member in tokens.positions(_MEMBER):
        if member < 2 or texts[member - 2] not in _BINDERS or member + 1 >= len(texts):
            continue
        for set_type in types.get(texts[member + 1], []):
            if len(set_type) > 1 and set_type[0] in ("Set", "Finset"):
                _add(found, texts[member - 1], unwrapped(set_type[1:]))
    return found


def merge(types: dict[str, list[TypeText]], more: dict[str, list[TypeText]]) -> None:
    """`more`'s types added to `types`, under the same bound."""
    for name, type_texts in more.items():
        for type_text in type_texts:
            _add(types, name, type_text)


def unwrapped(type_text: Sequence[str]) -> TypeText:
    """The type without brackets around all of it: `(ℝ × ℝ)` -> `ℝ × ℝ`."""
    text = tuple(type_text)
    while len(text) >= 2 and text[0] == "(" and text[-1] == ")" and _closes_at_end(text):
        text = text[1:-1]
    return text


def _closes_at_end(text: TypeText) -> bool:
    depth = 0
    for position, part in enumerate(text):
        depth += (part in "([{⟨") - (part in ")]}⟩")
        if depth == 0 and position < len(text) - 1:
            return False
    return True


def top_level_split(text: TypeText, separator: str) -> list[TypeText]:
    """`text` split at `separator` outside brackets."""
    parts: list[list[str]] = [[]]
    depth = 0
    for part in text:
        depth += (part in "([{⟨") - (part in ")]}⟩")
        if depth == 0 and part == separator:
            parts.append([])
        else:
            parts[-1].append(part)
    return [tuple(found) for found in parts]


def token_span(tokens: Tokens, field: str, first: int, last: int) -> Span | None:
    place = tokens.span(first, last)
    return Span(field, *place) if place else None
