"""Which names a Lean text binds somewhere, scope ignored.

Binding positions known here: declaration names and binders (`(a b : T)`, bare `(n)`,
`{k}`), any `(x : T)` / `(α := T)` group, the names after a binder keyword
(`∀ x y ∈ S,`, `fun (a, b) =>`, `∑ k in s,`, `let x :=`, `∃ S : Finset ℕ,`), set-builder
and subtype braces (`{x | ...}`, `{f x | x ∈ S}`, `{x // p x}`), match patterns
`| ⟨a, b⟩ =>`, `if h : c`, universe names, structure fields and `where` definitions
(`carrier : T`, `Adj x y := ...`), and names declared by `notation "n" => ...`.
Collecting too many names can only hide a finding, never invent one.

Linear in the tokens: each rule runs over its own trigger tokens, finds where a binder
list ends with `Tokens.level_end` (a binary search) instead of walking it, and adds the
names it finds as index ranges that are merged as they come, so a run of triggers
(`∀ ∀ ∀ ...`, `Type Type ...`) reads each token once.
"""

from __future__ import annotations

from bisect import bisect_left
from itertools import compress, repeat

from app.evidence.declaration import DECLARATION_KEYWORDS, binder_groups, binder_names
from app.evidence.lean_source import OPENERS, Tokens

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
_PATTERN_STOPS = frozenset(["|", ":=", "=", "fun", "λ", "=>"])  # all but `=>` abort
_FIELD_CONTEXTS = frozenset({"where", "{"})
_SET_BARS = frozenset(["|", "//"])
_UNIVERSES = frozenset(["Type", "Sort", "universe"])
_BAR, _ARROW, _IF, _BRACE = frozenset(["|"]), frozenset(["=>"]), frozenset(["if"]), frozenset("{")
_DEFINES = frozenset([":", ":="])
_NEXT = (1).__add__
# Binder lists and patterns are short; a bounded look-ahead keeps hostile input linear.
WINDOW = 64


def notation_names(source: str) -> set[str]:
    """Names a `notation "n" => ...` line declares (read from raw source: they are strings):
    the first `"..."` (on the same line, not empty) after the word `notation`.

    One forward pass: a failed quote fails for every `notation` before it on its line.
    """
    names: set[str] = set()
    index, line_end = 0, -1
    while (start := source.find("notation", index)) >= 0:
        if start > line_end:
            line_end = source.find("\n", start)
            line_end = len(source) if line_end < 0 else line_end
        quote = source.find('"', start + 8, line_end)
        if quote < 0:
            index = line_end
            continue
        closing = source.find('"', quote + 1, line_end)
        if closing > quote + 1:
            names.add(source[quote + 1 : closing].strip())
            index = closing + 1
        else:
            index = quote + 1
    return names


def bound_names(tokens: Tokens) -> set[str]:
    bound = _Bound(tokens)
    for rule in (
        bound.declarations,
        bound.groups,
        bound.keywords,
        bound.patterns,
        bound.universes,
        bound.if_colons,
        bound.fields,
    ):
        rule()
    return bound.names


class _Spans:
    """Index ranges of bound names, merged as they come (in increasing order of start)."""

    def __init__(self) -> None:
        self.spans: list[list[int]] = []
        self.unordered: list[tuple[int, int]] = []

    def add(self, start: int, end: int) -> None:
        if start >= end:
            return
        if not self.spans or start > self.spans[-1][1]:
            self.spans.append([start, end])
        elif start < self.spans[-1][0]:
            self.unordered.append((start, end))
        elif end > self.spans[-1][1]:
            self.spans[-1][1] = end

    def all(self) -> list[tuple[int, int]]:
        return [(start, end) for start, end in self.spans] + self.unordered


class _Bound:
    """Every rule of one token list, and what the rules share."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens
        self.names: set[str] = set()
        self._walked: set[int] = set()  # group runs whose binder names were taken
        self._runs: dict[int, list[tuple[int, int]]] = {}  # bracket groups by run start
        self._ident_run = (0, 0)  # the last identifier run looked up: (start, end)

    # The rules, each over its own trigger tokens.

    def declarations(self) -> None:
        """`theorem foo (a : T)`: the name and the binders; an inductive's constructors."""
        texts, spans = self.tokens.texts, _Spans()
        starts = self.tokens.positions(DECLARATION_KEYWORDS)
        for number, index in enumerate(starts):
            self._signature(index + 1, spans)
            if texts[index] == "inductive":
                following = starts[number + 1] if number + 1 < len(starts) else len(texts)
                self._constructors(index + 1, min(following, len(texts) - 1), spans)
        self._take_texts(spans)

    def groups(self) -> None:
        """`(x y : T)`, `(α := T)`, or braces: `{x : T | ...}`, `{f x | x ∈ S}`, `{x // p}`."""
        tokens = self.tokens
        texts, idents = tokens.texts, tokens.idents()
        images, heads, names = _Spans(), _Spans(), _Spans()
        with_bar: set[int] = set()
        bars = tokens.positions_by_depth(_SET_BARS) if tokens.positions(_SET_BARS) else {}
        for start in tokens.positions(_BRACE) if bars else ():
            bar = _bar_inside(tokens, bars, start)
            if bar is not None:
                with_bar.add(start)
                heads.add(start + 1, bar)
                if tokens.ident_run_end(start + 1) < bar:  # the image form
                    images.add(bar + 1, self._names_end(bar + 1))
        # Any other group: `(names :` or `(names :=`, read for all groups at once (C-level).
        # Names are no closers, so such a group cannot have closed before its `:`.
        openers = tokens.positions(OPENERS)
        starts = list(compress(openers, map([*idents, False].__getitem__, map(_NEXT, openers))))
        names_ends = map(
            [*tokens.non_idents, len(texts)].__getitem__,
            map(bisect_left, repeat(tokens.non_idents), map(_NEXT, starts)),
        )
        afters = list(map(min, names_ends, map((1 + WINDOW).__add__, starts)))
        defined = map(_DEFINES.__contains__, map([*texts, ""].__getitem__, afters))
        for start, after in compress(zip(starts, afters, strict=True), defined):
            if start not in with_bar:
                names.add(start + 1, after)
        for spans in (images, names):
            self._take_texts(spans)
        self._take_heads(heads)

    def keywords(self) -> None:
        """Every name after a binder keyword up to its `,`/`=>`/`:`/`∈`... at its level."""
        tokens, spans = self.tokens, _Spans()
        depth, previous, end = -1, -1, -1
        for index in tokens.positions(_BINDER_KEYWORDS):
            # Keywords one after another at one level end where the first one does.
            if not (tokens.depths[index] == depth and previous < index < end):
                depth, previous = tokens.depths[index], index
                end = tokens.level_end(index + 1, _KEYWORD_STOPS)
            spans.add(index + 1, min(end, index + 1 + WINDOW))
        self._take_heads(spans)

    def patterns(self) -> None:
        """The names of `| pattern =>`; nothing when no `=>` ends it."""
        tokens, spans = self.tokens, _Spans()
        texts, arrows = tokens.texts, tokens.positions(_ARROW)
        for index in tokens.positions(_BAR) if arrows else ():
            start = index + 1
            arrow = bisect_left(arrows, start)
            if arrow == len(arrows) or arrows[arrow] >= start + WINDOW:
                continue
            end = tokens.level_end(start, _PATTERN_STOPS)
            if end < min(len(texts), start + WINDOW) and texts[end] == "=>":
                spans.add(start, end)
        self._take_heads(spans)

    def universes(self) -> None:
        spans = _Spans()
        for index in self.tokens.positions(_UNIVERSES):
            spans.add(index + 1, self._names_end(index + 1))
        self._take_texts(spans)

    def if_colons(self) -> None:
        """`if h : c then` binds `h`."""
        texts = self.tokens.texts
        for index in self.tokens.positions(_IF):
            if self._colon_follows(index + 1):
                self.names.add(texts[index + 1])

    def fields(self) -> None:
        """`carrier : T` or `r n1 n2 := ...` first on its line or right after `where` / `{`."""
        spans = _Spans()
        for index in self._fresh_names():
            if self._colon_follows(index):
                self._signature(index, spans)
        self._take_texts(spans)

    # What the rules share.

    def _signature(self, start: int, spans: _Spans) -> None:
        """`name`s then bracket groups: `theorem foo (a : T)`, `mem {s t} : ...`, `Adj x y :=`."""
        index = self._names_end(start)
        spans.add(start, index)
        # A run of groups is only ever entered at its start (after a name or keyword).
        if index not in self._walked:
            self._walked.add(index)
            for begin, end in self._groups(index):
                self.names.update(binder_names(self.tokens, begin, min(end, begin + WINDOW)))

    def _constructors(self, start: int, end: int, spans: _Spans) -> None:
        """`inductive T | a | b (n : ℕ)`: the names right after each `|`, up to the next
        command."""
        bars = self.tokens.positions(_BAR)
        for index in bars[bisect_left(bars, start) : bisect_left(bars, end)]:
            spans.add(index + 1, self._names_end(index + 1))

    def _colon_follows(self, index: int) -> bool:
        """Names from `index`, then bracket groups, then `:` or `:=`."""
        names_end = self._names_end(index)
        if names_end == index:
            return False
        after = self._group_run_end(names_end)
        return after < len(self.tokens.texts) and self.tokens.texts[after] in _DEFINES

    def _names_end(self, start: int) -> int:
        """Where the identifiers from `start` end (at most WINDOW of them)."""
        run_start, run_end = self._ident_run
        if not run_start <= start < run_end:
            run_end = self.tokens.ident_run_end(start)
            self._ident_run = (start, run_end)
        return min(run_end, start + WINDOW)

    def _group_run_end(self, start: int) -> int:
        """The end of the bracket groups following one another from `start`."""
        groups = self._groups(start)
        return groups[-1][1] if groups else start

    def _groups(self, start: int) -> list[tuple[int, int]]:
        if start not in self._runs:
            self._runs[start] = binder_groups(self.tokens, start)
        return self._runs[start]

    def _fresh_names(self) -> list[int]:
        """Identifiers first on their line or right after `where` / `{`."""
        tokens = self.tokens
        idents = tokens.idents()
        fresh = tokens.line_starts()
        fresh.update(index + 1 for index in tokens.positions(_FIELD_CONTEXTS))
        return sorted(index for index in fresh if index < len(idents) and idents[index])

    def _take_texts(self, spans: _Spans) -> None:
        texts = self.tokens.texts
        for start, end in spans.all():
            self.names.update(texts[start:end])

    def _take_heads(self, spans: _Spans) -> None:
        heads, idents = self.tokens.heads(), self.tokens.idents()
        for start, end in spans.all():
            self.names.update(compress(heads[start:end], idents[start:end]))


def _bar_inside(tokens: Tokens, bars: dict[int, list[int]], start: int) -> int | None:
    """The first `|` or `//` right inside the brace group at `start` (within WINDOW)."""
    at_depth = bars.get(tokens.depths[start])
    if not at_depth:
        return None
    found = bisect_left(at_depth, start)
    if found == len(at_depth) or at_depth[found] >= start + WINDOW:
        return None
    return at_depth[found] if at_depth[found] < tokens.group_end(start) else None
