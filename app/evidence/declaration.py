"""The shape of a Lean declaration: its binders and its conclusion, from tokens.

Approximate by design: it knows bracketed binders `(a b : T)`, `{α : Type*}`, `[Ring R]`,
`⦃x⦄` and bare `(n)`, then a `:` and the conclusion up to `:=`. That is how every
statement in the shared data is written. Binder types and the conclusion are ranges of
token indices into the `Tokens` they were read from.
"""

from __future__ import annotations

import functools
import operator
from bisect import bisect_left
from dataclasses import dataclass
from itertools import compress
from itertools import count as count_from

from app.evidence.lean_source import CLOSERS, OPENERS, Kind, Tokens

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
_DEFINITION_STOPS = DECLARATION_KEYWORDS | {":="}


@dataclass(frozen=True, slots=True)
class Binder:
    names: tuple[str, ...]
    type: range  # token indices; empty (at the group's start) for a bare binder `(n)`
    bracket: str


@dataclass(frozen=True, slots=True)
class Declaration:
    keyword: str
    binders: tuple[Binder, ...]
    conclusion: range  # token indices


# Two lints read the main theorem of the same tokens, one after the other.
@functools.lru_cache(maxsize=4)
def main_theorem(tokens: Tokens) -> Declaration | None:
    """The last theorem, lemma or example: the statement a pair is about."""
    starts = tokens.positions(THEOREM_KEYWORDS)
    return read_declaration(tokens, starts[-1]) if starts else None


def read_declaration(tokens: Tokens, start: int) -> Declaration:
    """The declaration whose keyword is at `start`: binder groups, then `:` and conclusion."""
    texts = tokens.texts
    index = start + 1
    if index < len(texts) and tokens.kinds[index] is Kind.IDENT:
        index += 1  # the declaration's name
    groups = binder_groups(tokens, index)
    index = groups[-1][1] if groups else index
    binders = tuple(read_binder(tokens, begin, end) for begin, end in groups)
    conclusion = range(index, index)
    if index < len(texts) and texts[index] == ":":
        conclusion = range(index + 1, _definition_start(tokens, index + 1))
    return Declaration(texts[start], binders, conclusion)


def binder_groups(tokens: Tokens, index: int) -> list[tuple[int, int]]:
    """(start, end) of each bracket group following one another from `index`."""
    texts = tokens.texts
    if index >= len(texts) or texts[index] not in OPENERS:
        return []
    # At one level the groups' openers and closers alternate: the run is read from those
    # two lists, up to the first gap between a group's end and the next group's start.
    level = tokens.depths[index]
    openers = tokens.positions_by_depth(OPENERS)[level]
    closers = tokens.positions_by_depth(CLOSERS).get(level - 1, [])
    first, closed = bisect_left(openers, index), bisect_left(closers, index)
    length = _run_length(openers, closers, first, closed)
    ends = [closer + 1 for closer in closers[closed : closed + length]]
    ends += [len(texts)] * (length - len(ends))  # the last group never closes
    return list(zip(openers[first : first + length], ends, strict=True))


def _run_length(openers: list[int], closers: list[int], first: int, closed: int) -> int:
    """How many groups follow one another from `openers[first]` (whose closer is
    `closers[closed]`), compared in chunks that double, so the work is the run's length."""
    done, size = 0, 8
    while True:
        ends = map((1).__add__, closers[closed + done : closed + done + size])
        starts = openers[first + done + 1 : first + done + 1 + size]
        compared = min(len(starts), len(closers) - closed - done)
        gap = next(compress(count_from(1), map(operator.ne, starts, ends)), None)
        if gap is not None:
            return done + gap
        if compared < size:
            return done + compared + 1  # no more groups, or the last one never closes
        done, size = done + size, size * 2


def read_binder(tokens: Tokens, begin: int, end: int) -> Binder:
    """The bracketed binder group `tokens[begin:end]`, brackets included."""
    texts = tokens.texts
    names = binder_names(tokens, begin, end)
    colon = begin + 1 + len(names)
    if names and colon < end and texts[colon] == ":":
        closed = texts[end - 1] in CLOSERS
        return Binder(names, range(colon + 1, end - 1 if closed else end), texts[begin])
    return Binder(names, range(begin, begin), texts[begin])


def binder_names(tokens: Tokens, begin: int, end: int) -> tuple[str, ...]:
    """The names the group `tokens[begin:end]` binds: `(a b : T)` -> a, b; bare `(n)` -> n;
    `[Ring R]` -> none."""
    texts = tokens.texts
    names_end = min(tokens.ident_run_end(begin + 1), end)
    after = texts[names_end] if names_end < end else ""
    if after == ":" or (after in CLOSERS and texts[begin] != "["):
        return tuple(texts[begin + 1 : names_end])
    return ()


def _definition_start(tokens: Tokens, start: int) -> int:
    """The `:=` or next declaration keyword that ends the conclusion (outside brackets)."""
    base, stops = tokens.depth_before(start), tokens.positions(_DEFINITION_STOPS)
    for found in range(bisect_left(stops, start), len(stops)):
        if tokens.depths[stops[found]] <= base:
            return stops[found]
    return len(tokens.texts)
