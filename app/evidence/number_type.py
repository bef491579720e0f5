"""Lint `narrower_number_type`: a variable typed `ℕ` (or `ℤ`, `ℝ`) where the informal text
says it is an integer, a real or a complex number.

A variable `x : ℕ` ranges over 0, 1, 2, …: a statement about "real numbers x" or "integers
x" written with `x : ℕ` is about fewer numbers, and its arithmetic truncates (`ℕ`
subtraction and division). The informal text declares a variable's kind in a few fixed
ways, and only those are read: `$x$ and $y$ be real numbers`, `real numbers $a, b$`,
`$x \\in \\mathbb{R}$`. Integers qualified as positive, nonnegative or natural fit `ℕ`, and
a declaration is only trusted for a name it lists alone in its math (`$x$`, `$a, b$`),
so `$f(x)$` declares nothing. Fires when every type the statement writes for that name is
the narrower one. Linear: one pass of regular expressions that cannot backtrack over the
informal text, and the statement's written types read once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.evidence.finding import Detected
from app.evidence.lean_source import Tokens, lean_tokens
from app.evidence.typed_names import TypeText, declared_types, token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
MAX_TEXT = 20_000  # informal characters read: declarations come first
# A math span that only lists names: `$x$`, `$a, b$`, `$x_1, x_2$`, `$a,b,c$`.
_NAME = r"[A-Za-z](?:_\{?[0-9A-Za-z]\}?|'|[0-9])?"
# A trailing relation is allowed (`$x \\neq 1$`): the names still come first.
_RELATION = r"(?:\\neq?|\\geq?|\\leq?|[<>≠≤≥])[^$]{0,20}"
_NAMES = rf"\$\s*{_NAME}(?:\s*,\s*{_NAME}){{0,6}}\s*(?:{_RELATION})?\$"
# Atomic: once the names are read they are not read again shorter, so a run of `$x$ and`
# with no verb after it costs one pass, not one per way of splitting it.
_NAME_LIST = rf"(?>{_NAMES}(?:\s*(?:,|,?\s*and)\s*{_NAMES}){{0,6}})"
_ADJECTIVES = (
    r"(?:(?:positive|negative|nonnegative|non-negative|nonzero|non-zero|distinct|odd|even|"
    r"natural|arbitrary|given|fixed|two|three|four|some|all|any|a|an|the)\s+){0,4}"
)
_KIND = r"(real|integer|rational|complex)"
# `$x$ and $y$ be/are (positive) real numbers`, `$n$ is an integer`.
_NAMES_THEN_KIND = re.compile(
    rf"({_NAME_LIST})\s*(?:be|are|is|denote|denotes|represent)\s+({_ADJECTIVES}){_KIND}s?\b",
    re.IGNORECASE,
)
# `real numbers $a$ and $b$`, `for integers $m, n$`.
# It starts at the kind word (a leading run of adjectives would be tried at every
# character); the qualifiers before it are read from `_BOUND_WINDOW` characters back.
_KIND_THEN_NAMES = re.compile(
    rf"\b{_KIND}s?(?:\s+numbers?)?\s+(?:such\s+that\s+)?({_NAME_LIST})",
    re.IGNORECASE,
)
# `$x \in \mathbb{R}$`, `$a, b \in \mathbb Z$`, `$x ∈ ℝ$`.
_MEMBER_OF = re.compile(
    rf"\$\s*({_NAME}(?:\s*,\s*{_NAME}){{0,6}})\s*(?:\\in|∈)\s*"
    r"(?:\\mathbb\s*\{?\s*([RZQC])\s*\}?|([ℝℤℚℂ]))\s*\$"
)
_BLACKBOARD = {
    "N": "ℕ",
    "R": "ℝ",
    "Z": "ℤ",
    "Q": "ℚ",
    "C": "ℂ",
    "ℝ": "ℝ",
    "ℤ": "ℤ",
    "ℚ": "ℚ",
    "ℂ": "ℂ",
}
_WORD_TYPE = {"real": "ℝ", "integer": "ℤ", "rational": "ℚ", "complex": "ℂ"}
# Integers qualified so (or bounded below right after: `with $1 \leq k$`, `greater than 1`)
# are what `ℕ` holds, with a guard the statement may write.
_FITS_NAT = re.compile(
    r"positive|nonnegative|non-negative|natural|greater|larger|at least|"
    r"\\geq?|\\leq?|[<>≤≥]",
    re.IGNORECASE,
)
_BOUND_WINDOW = 60  # characters after a declaration read for a lower bound
# The types a written type is narrower than.
# `ℕ` for a said integer is not reported: on reading, the shared pairs that do so type
# primes, exponents, divisors and counts, which are nonnegative by the text's own sense.
_WIDER = {
    "ℕ": frozenset(["ℚ", "ℝ", "ℂ"]),
    "ℤ": frozenset(["ℚ", "ℝ", "ℂ"]),
    "ℚ": frozenset(["ℝ", "ℂ"]),
    "ℝ": frozenset(["ℂ"]),
}
_MATH = re.compile(r"\$([^$]*)\$")
_NAME_LIST_IN_MATH = re.compile(rf"\s*{_NAME}(?:\s*,\s*{_NAME}){{0,6}}")
# `$f: \mathbb{R} \to \mathbb{R}$`, `$g:\mathbb{N}\rightarrow\mathbb{N}$` (a set with a
# superscript, `\mathbb{R}^2`, is no number type and does not match).
_SET = r"\\mathbb\s?\{?\s?([NZQRC])\s?\}?(\^\s?\{?\s?\+\s?\}?)?"
_FUNCTION = re.compile(rf"\$\s?({_NAME})\s?:\s?{_SET}\s?(?:\\to|\\rightarrow|→)\s?{_SET}\s?\$")
_COLON = frozenset([":"])
_KIND_WORDS = ("real", "integer", "rational", "complex")


def find_narrower_number_type(pair: Pair) -> list[Detected]:
    said = informal_types(pair.informal[:MAX_TEXT])
    if not said:
        return []
    tokens = lean_tokens(pair.formal)
    written = declared_types(tokens)
    found: list[Detected] = []
    for name, wide in said.items():
        types = written.get(name, [])
        if types and all(t == types[0] for t in types) and _narrower(types[0], wide):
            found.append(_finding(tokens, name, " ".join(types[0]), " ".join(wide)))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _narrower(written: TypeText, said: TypeText) -> bool:
    """Whether `written` has the shape of `said` (`T` or `A → B`) with some part narrower."""
    if len(written) != len(said) or (len(said) == 3 and written[1] != "→"):
        return False
    return any(said[i] in _WIDER.get(written[i], ()) for i in range(0, len(said), 2))


def informal_types(informal: str) -> dict[str, TypeText]:
    """The number type (`("ℝ",)`) or function type between number types (`("ℝ", "→",
    "ℝ")`) the informal text declares for each name it declares one for (a name declared
    with two different types is left out)."""
    said: dict[str, set[TypeText]] = {}
    # One space for every run: the patterns' `\\s*` then match one character at most,
    # so no run of spaces can make them try many splits.
    for name, kind in _declarations(" ".join(informal.split())):
        said.setdefault(name, set()).add(kind)
    return {name: kinds.pop() for name, kinds in said.items() if len(kinds) == 1}


def _declarations(informal: str) -> Iterator[tuple[str, TypeText]]:
    """Every (name, type) the text declares. Each pattern runs only where a plain substring
    search finds what it cannot match without, which most texts lack."""
    if "$" not in informal:
        return
    lowered = informal.lower()
    if any(word in lowered for word in _KIND_WORDS):
        yield from _spoken_declarations(informal)
    if "\\in" in informal or "∈" in informal:
        yield from _memberships(informal)
    if "\\to" in informal or "\\rightarrow" in informal or "→" in informal:
        yield from _functions(informal)


def _spoken_declarations(informal: str) -> Iterator[tuple[str, TypeText]]:
    for match in _NAMES_THEN_KIND.finditer(informal):
        after = informal[match.end() : match.end() + _BOUND_WINDOW]
        yield from _typed(match.group(1), match.group(1) + match.group(2) + after, match.group(3))
    for match in _KIND_THEN_NAMES.finditer(informal):
        around = informal[max(0, match.start() - _BOUND_WINDOW) : match.end() + _BOUND_WINDOW]
        yield from _typed(match.group(2), around, match.group(1))


def _memberships(informal: str) -> Iterator[tuple[str, TypeText]]:
    for match in _MEMBER_OF.finditer(informal):
        kind = _BLACKBOARD[match.group(2) or match.group(3)]
        for name in match.group(1).split(","):
            yield _lean_name(name.strip()), (kind,)


def _functions(informal: str) -> Iterator[tuple[str, TypeText]]:
    for match in _FUNCTION.finditer(informal):
        domain = _set_type(match.group(2), match.group(3))
        codomain = _set_type(match.group(4), match.group(5))
        yield _lean_name(match.group(1)), (domain, "→", codomain)


def _typed(names: str, adjectives: str, word: str) -> Iterator[tuple[str, TypeText]]:
    kind = _WORD_TYPE[word.lower()]
    if kind == "ℤ" and _FITS_NAT.search(adjectives):
        kind = "ℕ"  # positive or nonnegative integers are what `ℕ` (with a guard) holds
    for math in _MATH.findall(names):
        for name in _NAME_LIST_IN_MATH.match(math).group().split(","):  # type: ignore[union-attr]
            yield _lean_name(name.strip()), (kind,)


def _set_type(letter: str, positive: str | None) -> str:
    """`\\mathbb{Z}^+`, the positive integers, is what `ℕ` (with a guard) holds."""
    return "ℕ" if letter == "Z" and positive else _BLACKBOARD[letter]


def _lean_name(name: str) -> str:
    """`x_1` / `x_{1}` as Lean writes it: `x₁` (a subscript digit) or `x1`."""
    base, _, index = name.partition("_")
    index = index.strip("{}")
    if index.isdigit():
        return base + "".join(chr(0x2080 + int(digit)) for digit in index)
    return base + index


def _finding(tokens: Tokens, name: str, narrow: str, wide: str) -> Detected:
    message = (
        f"`{name}` is typed `{narrow}`, but the informal text says it is "
        f"{_SPOKEN.get(wide, f'a function `{wide}`')}, so the statement covers fewer values "
        "than it should; "
        f"write `{name} : {wide}`."
    )
    first = _first_declaration(tokens, name)
    return Detected(message, token_span(tokens, "formal", first, first) if first >= 0 else None)


_SPOKEN = {"ℤ": "an integer", "ℚ": "a rational", "ℝ": "a real number", "ℂ": "a complex number"}


def _first_declaration(tokens: Tokens, name: str) -> int:
    """The first place `name` stands among the names just before a `:` (or -1)."""
    texts = tokens.texts
    for colon in tokens.positions(_COLON):
        window = texts[max(0, colon - 16) : colon]
        if name in window:
            return colon - len(window) + window.index(name)
    return -1
