"""Lint `truncating_division`: a `/` that Lean computes in ℕ or ℤ, where it truncates.

Two shapes, both taken from fixed statements in the labelled data:
- an exponent `x ^ (a / b)` whose parts are only numerals and ℕ/ℤ variables, with no type
  ascription: `^` takes a natural-number exponent by default, so `r^(1 / 3)` is `r^0`;
- a numeral division that does not come out even (`1 / 4`) in a comparison whose every
  part is a numeral or an ℕ/ℤ variable: with nothing to make it real, `1 / 4 = 0`.
A variable counts as ℕ/ℤ only when some binder gives it exactly that type and none gives
it another; anything unknown (a function, a cast `↑`, a real variable, an ascription)
silences the lint. So it misses `x / y` hidden behind functions, never guesses.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Container

from app.evidence.finding import Detected, Span
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

INTEGER_TYPES = frozenset({"ℕ", "ℤ", "Nat", "Int"})
_ARITHMETIC = frozenset(["+", "-", "*", "/", "%", "^", "(", ")"])
_COMPARISONS = frozenset(["=", "≠", "<", ">", "≤", "≥", "∣"])
# A comparison ends at these; `:` also ends a binder's name part.
_SEGMENT_ENDS = frozenset([",", ":", ":=", "∧", "∨", "→", "↔", "¬", "∀", "∃"])
_NON_ROUND = frozenset(["[", "]", "{", "}", "⟨", "⟩", "⦃", "⦄"])
_SPLITS = _SEGMENT_ENDS | _NON_ROUND
_TYPE_ENDS = frozenset([")", "}", ",", "⦄"])
_DIVISION = frozenset(["/"])
_POWER = frozenset(["^"])
_COLON = frozenset([":"])
MAX_FINDINGS = 5
# An exponent longer than this is no simple quotient; skipping it keeps the scan linear.
MAX_EXPONENT_TOKENS = 32
# Numerals longer than this are not converted (Python refuses, and it would take quadratic
# time): whether they divide evenly is not known, so the quotient counts as truncating.
MAX_DIGITS = 4300
# `_short` keeps 80 characters, which the first 80 tokens always reach.
_CONTEXT_TOKENS = 80


def find_truncating_division(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    if not tokens.positions(_DIVISION):
        return []  # both shapes need a `/`
    integers = _IntegerNames(tokens)
    found = _exponent_findings(tokens, integers) + _literal_findings(tokens, integers)
    # One finding per message (the first place it is found), as before spans.
    by_message = {detected.message: detected for detected in reversed(found)}
    return list(reversed(by_message.values()))[:MAX_FINDINGS]


class _IntegerNames(Container[str]):
    """`integer_variables`, worked out the first time a name is asked about."""

    def __init__(self, tokens: Tokens) -> None:
        self._tokens = tokens
        self._names: set[str] | None = None

    def __contains__(self, name: object) -> bool:
        if self._names is None:
            self._names = integer_variables(self._tokens)
        return name in self._names


def integer_variables(tokens: Tokens) -> set[str]:
    """Names every binder of which gives type exactly ℕ or ℤ (`(n : ℕ)`, `∀ k : ℤ,`)."""
    texts, kinds = tokens.texts, tokens.kinds
    integer: set[str] = set()
    other: set[str] = set()
    for colon in tokens.positions(_COLON):
        if colon + 2 >= len(texts) or colon == 0 or kinds[colon - 1] is not Kind.IDENT:
            continue
        # The names right before the colon: at most 16 tokens back, all identifiers.
        previous = bisect_left(tokens.non_idents, colon) - 1
        first = max(colon - 16, tokens.non_idents[previous] + 1 if previous >= 0 else 0)
        type_name = texts[colon + 1] if texts[colon + 2] in _TYPE_ENDS else "?"
        (integer if type_name in INTEGER_TYPES else other).update(texts[first:colon])
    return integer - other


def _exponent_findings(tokens: Tokens, integers: Container[str]) -> list[Detected]:
    texts, found = tokens.texts, []
    for index in tokens.positions(_POWER):
        if index + 1 >= len(texts) or texts[index + 1] != "(":
            continue
        end = tokens.group_end(index + 1) - 1
        if end - (index + 2) > MAX_EXPONENT_TOKENS:
            continue
        inner = texts[index + 2 : end]
        if _is_truncating_exponent(inner, tokens.kinds[index + 2 : end], integers):
            span = token_span(tokens, "formal", index + 1, end)
            found.append(Detected(_exponent_message(" ".join(inner)), span))
        if len(found) >= MAX_FINDINGS:
            break
    return found


def _is_truncating_exponent(texts: list[str], kinds: list[Kind], integers: Container[str]) -> bool:
    if not any(_divides_a_numeral(texts, kinds, index) for index in range(1, len(texts))):
        return False
    if not all(map(_is_integer_part, texts, kinds, [integers] * len(texts))):
        return False
    numbers = [kind for kind in kinds if kind is not Kind.SYMBOL]
    # A bare numeral quotient that divides evenly (`4 / 2`) loses nothing.
    return not (len(texts) == 3 and len(numbers) == 2 and _divides_evenly(texts))


def _divides_a_numeral(texts: list[str], kinds: list[Kind], index: int) -> bool:
    """`1 / n`, `4 / 19`: a numeral on its own divided. `(p - 1) / 2` or `m / 2` are
    usually meant as floors (of an even number), so they do not count."""
    if texts[index] != "/" or kinds[index - 1] is not Kind.NUMBER:
        return False
    return index < 2 or texts[index - 2] in ("(", "+", "-")


def _is_integer_part(text: str, kind: Kind, integers: Container[str]) -> bool:
    if kind is Kind.NUMBER:
        return "." not in text
    return text in integers if kind is Kind.IDENT else text in _ARITHMETIC


def _divides_evenly(quotient: list[str]) -> bool:
    numerator, _, denominator = quotient
    if not (_is_numeral(numerator) and _is_numeral(denominator)):
        return False
    if max(len(numerator), len(denominator)) > MAX_DIGITS:
        return False
    return int(denominator) != 0 and int(numerator) % int(denominator) == 0


def _is_numeral(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _exponent_message(exponent: str) -> str:
    return (
        f"the exponent `({_short(exponent)})` is computed in ℕ/ℤ, where `/` truncates "
        "(`1 / 3 = 0`); write e.g. `(1 / 3 : ℝ)` for a real exponent"
    )


def _literal_findings(tokens: Tokens, integers: Container[str]) -> list[Detected]:
    found: list[Detected] = []
    for start, stop in _segments_with_division(tokens):
        quotients = _uneven_quotients(tokens, start, stop)
        if quotients and _is_integer_comparison(tokens, start, stop, integers):
            context = _short(" ".join(tokens.texts[start : min(stop, start + _CONTEXT_TOKENS)]))
            found.extend(
                Detected(
                    _literal_message(tokens.texts[q - 1 : q + 2], context), _quotient(tokens, q)
                )
                for q in quotients
            )
        if len(found) >= MAX_FINDINGS:
            break
    return found


def _segments_with_division(tokens: Tokens) -> list[tuple[int, int]]:
    """The token runs between connectives, colons and non-round brackets that hold a `/`.

    Round brackets do not split (they group arithmetic); a binder's `(h :` and `)` end up
    as a stray bracket at a segment's edge, which the arithmetic test accepts.
    """
    splits = tokens.positions(_SPLITS)
    segments: dict[tuple[int, int], None] = {}
    for division in tokens.positions(_DIVISION):
        after = bisect_left(splits, division)
        start = splits[after - 1] + 1 if after else 0
        segments.setdefault((start, splits[after] if after < len(splits) else len(tokens)))
    return list(segments)


def _quotient(tokens: Tokens, division: int) -> Span | None:
    return token_span(tokens, "formal", division - 1, division + 1)


def _uneven_quotients(tokens: Tokens, start: int, stop: int) -> list[int]:
    """The `/` of the first few `a / b` of numerals in `tokens[start:stop]` that do not
    divide evenly."""
    texts, kinds, quotients = tokens.texts, tokens.kinds, []
    divisions = tokens.positions(_DIVISION)
    for index in divisions[bisect_left(divisions, start + 1) : bisect_left(divisions, stop - 1)]:
        if kinds[index - 1] is Kind.NUMBER is kinds[index + 1] and _uneven(
            texts[index - 1 : index + 2]
        ):
            quotients.append(index)
            if len(quotients) == MAX_FINDINGS:
                break
    return quotients


def _uneven(quotient: list[str]) -> bool:
    whole_part = quotient[2].partition(".")[0]
    return whole_part.strip("0") != "" and not _divides_evenly(quotient)


def _is_integer_comparison(tokens: Tokens, start: int, stop: int, integers: Container[str]) -> bool:
    texts = tokens.texts[start:stop]
    if _COMPARISONS.isdisjoint(texts):
        return False
    # Each distinct token once: a long comparison repeats the same few.
    return all(
        text in _COMPARISONS or _is_integer_part(text, kind, integers)
        for text, kind in set(zip(texts, tokens.kinds[start:stop], strict=True))
    )


def _literal_message(quotient: list[str], context: str) -> str:
    text = _short(" ".join(quotient))
    return (
        f"`{text}` in `{context}` is computed in ℕ/ℤ, where it truncates; "
        "nothing in the comparison makes it real or rational"
    )


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
