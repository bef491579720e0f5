"""Lean 4 source as the lints see it: comments and strings removed, then tokens.

This is an approximation of Lean's lexer, good enough for statement-level lints: it does
not know notation, so the lints built on it state their own limits. Pure and cheap.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from enum import Enum

_IDENT_START = "A-Za-z_\u0370-\u03ff\u1f00-\u1fff\u2100-\u214f\U0001d400-\U0001d7ff"
_SUBSCRIPTS = "\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a\u2c7c"
_IDENT_PART = f"[{_IDENT_START}][{_IDENT_START}0-9'!?{_SUBSCRIPTS}]*"
# λ, Π and Σ are binder keywords in Lean 4, never identifier letters.
_NOT_IDENT = "λΠΣ"

# A dotted name is one token (`Finset.range`, `s.card`); `x.1` is `x` then `.1`.
_TOKEN = re.compile(
    # `s(a, b)` is Mathlib's Sym2 notation and `↪o` an order embedding, not names `s`, `o`.
    r"(?P<notation>(?<![\w.'])s\(|[↪≃→]o(?![\w']))"
    rf"|(?P<ident>(?![{_NOT_IDENT}]){_IDENT_PART}(?:\.(?![{_NOT_IDENT}]){_IDENT_PART})*)"
    r"|(?P<number>[0-9]+(?:\.[0-9]+)?)"
    r"|(?P<symbol>:=|=>|->|<-|//|\.\.|<\||\|>|\S)"
)

OPENERS = frozenset(["(", "[", "{", "⟨", "⦃", "s("])
CLOSERS = frozenset(")]}⟩⦄")


class Kind(Enum):
    IDENT = "ident"
    NUMBER = "number"
    SYMBOL = "symbol"


# A match's group name -> its kind (a dict look-up: Kind(name) cost 8% of tokenizing).
_KINDS = {
    None: Kind.SYMBOL,
    "notation": Kind.SYMBOL,
    "ident": Kind.IDENT,
    "number": Kind.NUMBER,
    "symbol": Kind.SYMBOL,
}


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    kind: Kind
    line: int
    column: int

    @property
    def head(self) -> str:
        """The first component of a dotted name: `s` for `s.card`."""
        return self.text.split(".", 1)[0]


def strip_comments_and_strings(source: str) -> str:
    """The source with comments blanked and string literals reduced to `""`.

    Line breaks inside comments are kept so that line numbers and indentation survive.
    Block comments nest, as in Lean. An unterminated comment runs to the end.
    """
    out: list[str] = []
    i = 0
    while i < len(source):
        if source.startswith("/-", i):
            i = _skip_block_comment(source, i, out)
        elif source.startswith("--", i):
            end = source.find("\n", i)
            i = len(source) if end < 0 else end
        elif source[i] == '"':
            i = _skip_string(source, i)
            out.append('""')
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


def _skip_block_comment(source: str, start: int, out: list[str]) -> int:
    depth, i = 0, start
    while i < len(source):
        if source.startswith("/-", i):
            depth, i = depth + 1, i + 2
        elif source.startswith("-/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                out.append(" ")  # `a/- -/b` is two tokens, not `ab`
                return i
        else:
            out.append("\n" if source[i] == "\n" else "")
            i += 1
    out.append(" ")
    return i


def _skip_string(source: str, start: int) -> int:
    i = start + 1
    while i < len(source) and source[i] != '"':
        i += 2 if source[i] == "\\" else 1
    return i + 1


def tokenize(source: str) -> list[Token]:
    """Tokens of already-stripped source, each with its line and column."""
    tokens: list[Token] = []
    for number, line in enumerate(source.split("\n")):
        for match in _TOKEN.finditer(line):
            kind = _KINDS[match.lastgroup]
            tokens.append(Token(match.group(), kind, number, match.start()))
    return tokens


@dataclass(frozen=True, slots=True)
class Tokens:
    """A token list with every bracket group's end computed once (linear, stack-based)."""

    items: list[Token]
    ends: dict[int, int]  # opener index -> index just past its closer (or the end)

    @classmethod
    def of(cls, items: list[Token]) -> Tokens:
        ends: dict[int, int] = {}
        stack: list[int] = []
        for index, token in enumerate(items):
            if token.text in OPENERS:
                stack.append(index)
            elif token.text in CLOSERS and stack:
                ends[stack.pop()] = index + 1
        ends.update((index, len(items)) for index in stack)
        return cls(items, ends)

    def group_end(self, start: int) -> int:
        """Index just past the group opening at `start`; `start + 1` if it opens none."""
        return self.ends.get(start, start + 1)


# Every check of one pair tokenizes the same formal text: the checks of a pair run back to
# back, so a small cache computes it once per pair. Callers only read the result.
@functools.lru_cache(maxsize=16)
def lean_tokens(source: str) -> Tokens:
    """Tokens of raw Lean source: comments and strings removed, tactic blocks dropped."""
    return Tokens.of(drop_tactic_blocks(tokenize(strip_comments_and_strings(source))))


def drop_tactic_blocks(tokens: list[Token]) -> list[Token]:
    """Tokens without any `by` block.

    Tactic blocks are proofs, not statements: their names (`intro x`) are no binders the
    lints understand, and `sorry` lives there. A block is the `by`, the rest of its line up
    to a `,` or a bracket closing outside it, and the lines indented deeper than its own.
    """
    kept: list[Token] = []
    indents = _line_indents(tokens)
    index = 0
    while index < len(tokens):
        if tokens[index].text == "by":
            index = _tactic_block_end(tokens, index, indents)
        else:
            kept.append(tokens[index])
            index += 1
    return kept


def _tactic_block_end(tokens: list[Token], start: int, indents: dict[int, int]) -> int:
    line, depth = tokens[start].line, 0
    for index in range(start + 1, len(tokens)):
        token = tokens[index]
        if token.line != line:
            if indents[token.line] <= indents[line]:
                return index
            continue
        depth += (token.text in OPENERS) - (token.text in CLOSERS)
        if depth < 0 or (depth == 0 and token.text == ","):
            return index
    return len(tokens)


def _line_indents(tokens: list[Token]) -> dict[int, int]:
    indents: dict[int, int] = {}
    for token in tokens:
        indents.setdefault(token.line, token.column)
    return indents
