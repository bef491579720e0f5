"""Lean 4 source as the lints see it: comments and strings removed, then tokens.

This is an approximation of Lean's lexer, good enough for statement-level lints: it does
not know notation, so the lints built on it state their own limits. Pure, and linear in
the text whatever its shape: comments, strings and tokens are found by regular
expressions that never backtrack, per-token work runs in C-level builtins (`map`,
`compress`, `accumulate`) over parallel lists, and the lints ask "where does this bracket
level end" through `Tokens.level_end` (a binary search) instead of walking the tokens.
Nothing here recurses.
"""

from __future__ import annotations

import functools
import operator
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from itertools import accumulate, chain, compress, repeat

_IDENT_START = "A-Za-z_\u0370-\u03ff\u1f00-\u1fff\u2100-\u214f\U0001d400-\U0001d7ff"
_SUBSCRIPTS = "\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a\u2c7c"
_IDENT_PART = f"[{_IDENT_START}][{_IDENT_START}0-9'!?{_SUBSCRIPTS}]*"
# λ, Π and Σ are binder keywords in Lean 4, never identifier letters.
_NOT_IDENT = "λΠΣ"
# A dotted name is one token (`Finset.range`, `s.card`); `x.1` is `x` then `.1`.
_IDENT = rf"(?![{_NOT_IDENT}]){_IDENT_PART}(?:\.(?![{_NOT_IDENT}]){_IDENT_PART})*"
_IDENT_TOKEN = re.compile(_IDENT)

# Alternatives in priority order; a line break is a token of its own, so one pass over
# the whole text also gives each token's line. No alternative can match a line break.
_TOKEN = re.compile(
    # `s(a, b)` is Mathlib's Sym2 notation and `↪o` an order embedding, not names `s`, `o`
    # (the `s` is matched before the look-behind: most positions fail on it at once).
    r"s(?<![\w.']s)\(|[↪≃→]o(?![\w'])"
    rf"|{_IDENT}"
    r"|[0-9]+(?:\.[0-9]+)?"
    r"|:=|=>|->|<-|//|\.\.|<\||\|>|\S"
    r"|\n"
)
# The same tokens without the line breaks: where each token starts, for spans.
_TOKEN_PLACES = re.compile(_TOKEN.pattern.removesuffix(r"|\n"))
_LINE_BREAK = re.compile("\n")
# What the comment and string stripper stops at, and what ends a block comment's nesting.
_SPECIAL = re.compile(r'/-|--|"')
_COMMENT_MARK = re.compile(r"/-|-/")
# A string literal after its opening quote: escapes skip one character (a line break too).
_STRING_REST = re.compile(r'(?:[^"\\]++|\\[\s\S]?)*+"?')

OPENERS = frozenset(["(", "[", "{", "⟨", "⦃", "s("])
CLOSERS = frozenset(")]}⟩⦄")
BRACKETS = OPENERS | CLOSERS
_DEPTH_CHANGE = {**dict.fromkeys(OPENERS, 1), **dict.fromkeys(CLOSERS, -1)}


class Kind(Enum):
    IDENT = "ident"
    NUMBER = "number"
    SYMBOL = "symbol"


class _KindOf(dict[str, Kind]):
    """A token's kind from its text, worked out once per distinct text."""

    def __missing__(self, text: str) -> Kind:
        if "0" <= text[0] <= "9":
            kind = Kind.NUMBER
        else:
            kind = Kind.IDENT if _IDENT_TOKEN.fullmatch(text) else Kind.SYMBOL
        self[text] = kind
        return kind


def head(text: str) -> str:
    """The first component of a dotted name: `s` for `s.card`."""
    return text.partition(".")[0]


def strip_comments_and_strings(source: str) -> str:
    """The source with comments blanked and string literals reduced to `""`.

    Line breaks inside comments are kept so that line numbers and indentation survive.
    Block comments nest, as in Lean. An unterminated comment runs to the end.
    """
    return _stripped(source, keep_columns=False)


def blank_comments_and_strings(source: str) -> str:
    """The source with every character of a comment or string literal (but a literal's
    quotes, and line breaks) made a space: the same tokens as `strip_comments_and_strings`,
    each at its place in `source`, which is how findings get their columns."""
    return _stripped(source, keep_columns=True)


def _stripped(source: str, *, keep_columns: bool) -> str:
    out: list[str] = []
    index = 0
    while (special := _SPECIAL.search(source, index)) is not None:
        out.append(source[index : special.start()])
        mark = special.group()
        if mark == "/-":
            index = _skip_block_comment(source, special.end(), out, keep_columns)
        elif mark == "--":
            end = source.find("\n", special.end())
            index = len(source) if end < 0 else end
            if keep_columns:
                out.append(" " * (index - special.start()))
        else:
            string = _STRING_REST.match(source, special.end())
            index = string.end() if string else len(source)
            out.append(_blanked(source[special.start() : index]) if keep_columns else '""')
    out.append(source[index:])
    return "".join(out)


def _skip_block_comment(source: str, start: int, out: list[str], keep_columns: bool) -> int:
    """Index just past the comment opened before `start`; its line breaks go to `out`."""
    depth = 1
    for mark in _COMMENT_MARK.finditer(source, start):
        depth += 1 if mark.group() == "/-" else -1
        if depth == 0:
            out.append(_blank(source[start - 2 : mark.end()], keep_columns))
            return mark.end()  # the space: `a/- -/b` is two tokens, not `ab`
    out.append(_blank(source[start - 2 :], keep_columns))
    return len(source)


def _blank(comment: str, keep_columns: bool) -> str:
    if keep_columns:
        return "\n".join(" " * len(row) for row in comment.split("\n"))
    return "\n" * comment.count("\n") + " "


def _blanked(literal: str) -> str:
    """A string literal as `"`, its inside blanked (line breaks kept), then `"`."""
    if len(literal) < 2:
        return literal  # `"` at the very end: one token where the stripped text has two
    inside = "\n".join(" " * len(row) for row in literal[1:-1].split("\n"))
    return f'"{inside}"'


# Identifier-like words the lints look for: indexed with the symbols (see `Tokens.positions`).
KEYWORDS = frozenset(
    [
        "in",
        "then",
        "else",
        "fun",
        "let",
        "letI",
        "have",
        "haveI",
        "obtain",
        "for",
        "if",
        "match",
        "where",
        "Type",
        "Sort",
        "universe",
        "notation",
        "theorem",
        "lemma",
        "example",
        "def",
        "abbrev",
        "instance",
        "structure",
        "inductive",
        "class",
        "axiom",
    ]
)
_QUERY_KINDS = _KindOf()  # kinds of the lints' own constant texts (a bounded set)


@dataclass(frozen=True, slots=True, eq=False)
class Tokens:
    """Tokens as parallel lists, with what the lints ask of them worked out once.

    `depths[i]` is the bracket depth after token `i` (stray closers count, so it can go
    below zero). `breaks` holds, for each line break, the index of the token after it.
    Lints read a bracket level through `level_end`.
    """

    texts: list[str]
    kinds: list[Kind]
    breaks: list[int]
    depths: list[int]
    non_idents: list[int]  # indices of every token that is not an identifier
    _index: dict[str, list[int]]  # symbol or keyword -> its indices
    _ends: dict[int, int] = field(default_factory=dict)  # group ends asked for so far
    _positions: dict[frozenset[str], list[int]] = field(default_factory=dict)
    _by_depth: dict[frozenset[str], dict[int, list[int]]] = field(default_factory=dict)
    _derived: dict[str, list[str] | list[bool]] = field(default_factory=dict)
    # The raw source and, per kept run of tokens, its (start, stop) among the tokens before
    # tactic blocks were dropped: where each token is, worked out only when asked.
    source: str = ""
    kept: tuple[tuple[int, int], ...] = ()
    _places: list[list[int]] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        texts: list[str],
        breaks: list[int],
        source: str = "",
        kept: tuple[tuple[int, int], ...] = (),
    ) -> Tokens:
        kinds = list(map(_KindOf().__getitem__, texts))
        depths = accumulate(map(_DEPTH_CHANGE.get, texts, repeat(0)))
        not_idents = compress(range(len(texts)), map(operator.is_not, kinds, repeat(Kind.IDENT)))
        index = _symbol_index(texts, kinds)
        return cls(
            texts, kinds, breaks, list(depths), list(not_idents), index, source=source, kept=kept
        )

    def span(self, first: int, last: int) -> tuple[int, int, int] | None:
        """(line, column, end_column) of tokens `first` to `last` (inclusive) in `source`:
        1-based line, 0-based code-point columns, cut at the end of `first`'s line; None
        when the tokens' places are not known."""
        if not self._places:
            self._places.extend(_token_places(self.source, self.kept, len(self.texts)))
        starts, rows = self._places
        if not 0 <= first <= last < len(starts):
            return None
        begin, end = starts[first], starts[last] + len(self.texts[last])
        line = bisect_left(rows, begin)  # rows: the offsets of the line breaks
        row_start = rows[line - 1] + 1 if line else 0
        row_end = rows[line] if line < len(rows) else len(self.source)
        return line + 1, begin - row_start, min(end, row_end) - row_start

    def __len__(self) -> int:
        return len(self.texts)

    def group_end(self, start: int) -> int:
        """Index just past the group opening at `start` (or the end, if it never closes);
        `start + 1` if it opens none. Brackets match as a stack would match them, whatever
        their shape: `(` may close with `]`, and a closer with nothing open is skipped."""
        end = self._ends.get(start)
        if end is None:
            if self.texts[start] not in OPENERS:
                return start + 1
            closer = self.level_close(start + 1)
            end = self._ends[start] = closer + 1 if closer < len(self.texts) else closer
        return end

    def depth_before(self, index: int) -> int:
        return self.depths[index - 1] if index > 0 else 0

    def level_end(self, start: int, stops: frozenset[str]) -> int:
        """The first index from `start` whose text is in `stops` at `start`'s bracket level,
        or of the closer that ends that level, or the end: where a scan from `start`
        counting brackets stops on `depth < 0 or (depth == 0 and text in stops)`.

        `stops` must hold no brackets. Answered by binary search over the positions of
        `stops` and of brackets, grouped by depth (each found once), so a lint may ask it
        for every token without rescanning anything.
        """
        stop_at = self.positions(stops)
        found = bisect_left(stop_at, start)
        stop = stop_at[found] if found < len(stop_at) else len(self.texts)
        brackets = self.positions(BRACKETS)
        bracket = bisect_left(brackets, start)
        if bracket == len(brackets) or brackets[bracket] > stop:
            return stop  # no bracket before it: the same level
        if self.texts[brackets[bracket]] in CLOSERS:
            return brackets[bracket]  # the level ends before any stop
        closing = self.level_close(start)
        at_level = self.positions_by_depth(stops).get(self.depth_before(start))
        if at_level:
            found = bisect_left(at_level, start)
            if found < len(at_level) and at_level[found] < closing:
                return at_level[found]
        return closing

    def level_close(self, start: int) -> int:
        """The closer that first takes the depth below its value before `start` (or the
        end): the first closer from `start` whose depth after it is one less."""
        closers = self.positions_by_depth(CLOSERS).get(self.depth_before(start) - 1)
        if closers:
            found = bisect_left(closers, start)
            if found < len(closers):
                return closers[found]
        return len(self.texts)

    def positions(self, wanted: frozenset[str]) -> list[int]:
        """The indices of the tokens whose text is in `wanted`, in order (found once per
        set; symbols and keywords come from an index, other texts from one pass)."""
        found = self._positions.get(wanted)
        if found is None:
            if _indexed(wanted):
                found = _merged([self._index[text] for text in wanted if text in self._index])
            else:
                found = indices(self.texts, wanted)
            self._positions[wanted] = found
        return found

    def positions_by_depth(self, stops: frozenset[str]) -> dict[int, list[int]]:
        """`positions(stops)` grouped by the depth after each (found once per set)."""
        grouped = self._by_depth.get(stops)
        if grouped is None:
            grouped = self._by_depth[stops] = {}
            depths = self.depths
            for index in self.positions(stops):
                grouped.setdefault(depths[index], []).append(index)
        return grouped

    def ident_run_end(self, start: int) -> int:
        """The first index from `start` that is not an identifier (or the end)."""
        found = bisect_left(self.non_idents, start)
        return self.non_idents[found] if found < len(self.non_idents) else len(self.texts)

    def heads(self) -> list[str]:
        """Each token's `head` (worked out once, and only for dotted tokens)."""
        if "heads" not in self._derived:
            heads = list(self.texts)
            for index in compress(range(len(heads)), map(operator.contains, heads, repeat("."))):
                heads[index] = head(heads[index])
            self._derived["heads"] = heads
        return self._derived["heads"]  # type: ignore[return-value]

    def idents(self) -> list[bool]:
        """Whether each token is an identifier (worked out once)."""
        if "idents" not in self._derived:
            self._derived["idents"] = list(map(operator.is_, self.kinds, repeat(Kind.IDENT)))
        return self._derived["idents"]  # type: ignore[return-value]

    def line_starts(self) -> set[int]:
        """The indices of the tokens that come first on their line."""
        return {0, *self.breaks} - {len(self.texts)}


# The lints ask with a bounded set of constant sets, the same for every pair: whether
# each is answered from the index is worked out once per set, not once per pair.
@functools.lru_cache(maxsize=1024)
def _indexed(wanted: frozenset[str]) -> bool:
    """Whether every text in `wanted` is a symbol or keyword (found in `_symbol_index`)."""
    return all(text in KEYWORDS or _QUERY_KINDS[text] is Kind.SYMBOL for text in wanted)


def _symbol_index(texts: list[str], kinds: list[Kind]) -> dict[str, list[int]]:
    """The indices of each symbol and keyword, in one pass over those tokens only."""
    index: dict[str, list[int]] = {}
    wanted = map(
        operator.or_,
        map(operator.is_, kinds, repeat(Kind.SYMBOL)),
        map(KEYWORDS.__contains__, texts),
    )
    for position in compress(range(len(texts)), wanted):
        text = texts[position]
        if text in index:
            index[text].append(position)
        else:
            index[text] = [position]
    return index


def _merged(lists: list[list[int]]) -> list[int]:
    # Sorted lists concatenated: Timsort merges the runs in linear time per run.
    return lists[0] if len(lists) == 1 else sorted(chain.from_iterable(lists))


def indices(texts: list[str], wanted: Iterable[str]) -> list[int]:
    """The indices of the tokens whose text is in `wanted`, in order (C-level, no loop)."""
    members = frozenset(wanted).__contains__
    return list(compress(range(len(texts)), map(members, texts)))


# Every check of one pair tokenizes the same formal text: the checks of a pair run back to
# back, so a small cache computes it once per pair. Callers only read the result.
@functools.lru_cache(maxsize=16)
def lean_tokens(source: str) -> Tokens:
    """Tokens of raw Lean source: comments and strings removed, tactic blocks dropped."""
    stripped = strip_comments_and_strings(source)
    texts, breaks = tokenize(stripped)
    kept = tactic_free_runs(texts, breaks, stripped)
    return Tokens.of(*_keep(texts, breaks, kept), source, tuple(kept))


def _token_places(
    source: str, kept: tuple[tuple[int, int], ...], count: int
) -> tuple[list[int], list[int]]:
    """Each kept token's offset in `source` (`count` of them), and the offsets of its line
    breaks. Blanking gives the stripped text's tokens but one: a `"` that ends the source
    is one quote there and two tokens in the stripped text; the second gets its place.
    The furthest kept run tells whether that extra token is there (the runs' lengths do
    not: runs may skip tokens before it, a dropped tactic block's)."""
    blanked = blank_comments_and_strings(source)
    starts = list(map(re.Match.start, _TOKEN_PLACES.finditer(blanked)))
    reached = max((stop for _, stop in kept), default=0)
    if blanked.endswith('"') and starts and len(starts) < reached:
        starts.append(starts[-1])
    runs = kept or ((0, len(starts)),)
    rows = list(map(re.Match.start, _LINE_BREAK.finditer(source)))
    places = list(chain.from_iterable(starts[start:stop] for start, stop in runs))
    return (places if len(places) == count else []), rows


def tokenize(source: str) -> tuple[list[str], list[int]]:
    """The texts of already-stripped source's tokens, and where its lines break: for each
    line break, the index of the token after it."""
    found = _TOKEN.findall(source)
    newlines = list(compress(range(len(found)), map("\n".__eq__, found)))
    if not newlines:
        return found, []
    # The k-th line break is preceded by k others, which are no tokens.
    breaks = list(map(operator.sub, newlines, range(len(newlines))))
    return list(compress(found, map("\n".__ne__, found))), breaks


def drop_tactic_blocks(
    texts: list[str], breaks: list[int], stripped: str
) -> tuple[list[str], list[int]]:
    """Tokens without any `by` block, and their line breaks (`stripped`: the text they were
    read from).

    Tactic blocks are proofs, not statements: their names (`intro x`) are no binders the
    lints understand, and `sorry` lives there. A block is the `by`, the rest of its line up
    to a `,` or a bracket closing outside it, and the lines indented deeper than its own.
    """
    return _keep(texts, breaks, tactic_free_runs(texts, breaks, stripped))


def tactic_free_runs(texts: list[str], breaks: list[int], stripped: str) -> list[tuple[int, int]]:
    """The (start, stop) token runs `drop_tactic_blocks` keeps."""
    blocks = indices(texts, ["by"])
    if not blocks:
        return [(0, len(texts))]
    rows = stripped.split("\n")
    kept: list[tuple[int, int]] = []
    index = 0
    for block in blocks:
        if block >= index:  # else inside the block just dropped
            kept.append((index, block))
            index = _tactic_block_end(texts, breaks, rows, block)
    kept.append((index, len(texts)))
    return kept


def _tactic_block_end(texts: list[str], breaks: list[int], rows: list[str], start: int) -> int:
    line = bisect_right(breaks, start)
    line_end = breaks[line] if line < len(breaks) else len(texts)
    depth = 0
    for index in range(start + 1, line_end):
        depth += _DEPTH_CHANGE.get(texts[index], 0)
        if depth < 0 or (depth == 0 and texts[index] == ","):
            return index
    indent, index = _indent(rows[line]), line_end
    while index < len(texts) and _indent(rows[bisect_right(breaks, index)]) > indent:
        following = bisect_right(breaks, index)  # the next line's first token
        index = breaks[following] if following < len(breaks) else len(texts)
    return index


def _keep(
    texts: list[str], breaks: list[int], kept: list[tuple[int, int]]
) -> tuple[list[str], list[int]]:
    """The tokens of the `kept` index ranges, and the line breaks before each kept token
    (one where a range starts on a later line than the kept token before it)."""
    kept_texts: list[str] = []
    kept_breaks: list[int] = []
    previous = -1  # the last kept token's index
    for start, stop in kept:
        offset = len(kept_texts) - start
        first = bisect_right(breaks, start)
        if kept_texts and start < stop and bisect_right(breaks, previous) < first:
            kept_breaks.append(len(kept_texts))
        kept_breaks += [at + offset for at in breaks[first : bisect_left(breaks, stop)]]
        kept_texts += texts[start:stop]
        previous = stop - 1 if start < stop else previous
    return kept_texts, kept_breaks


def _indent(row: str) -> int:
    # Every character but whitespace belongs to a token, so this is the first one's column.
    return len(row) - len(row.lstrip())
