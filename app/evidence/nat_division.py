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

from app.evidence.lean_source import Kind, Token, Tokens, lean_tokens
from app.vocabulary import Pair

INTEGER_TYPES = frozenset({"ℕ", "ℤ", "Nat", "Int"})
_ARITHMETIC = frozenset(["+", "-", "*", "/", "%", "^", "(", ")"])
_COMPARISONS = frozenset(["=", "≠", "<", ">", "≤", "≥", "∣"])
# A comparison ends at these; `:` also ends a binder's name part.
_SEGMENT_ENDS = frozenset([",", ":", ":=", "∧", "∨", "→", "↔", "¬", "∀", "∃"])
_NON_ROUND = frozenset(["[", "]", "{", "}", "⟨", "⟩", "⦃", "⦄"])
MAX_FINDINGS = 5
# An exponent longer than this is no simple quotient; skipping it keeps the scan linear.
MAX_EXPONENT_TOKENS = 32


def find_truncating_division(pair: Pair) -> list[str]:
    tokens = lean_tokens(pair.formal)
    integers = integer_variables(tokens)
    found = _exponent_findings(tokens, integers) + _literal_findings(tokens, integers)
    return list(dict.fromkeys(found))[:MAX_FINDINGS]


def integer_variables(tokens: Tokens) -> set[str]:
    """Names every binder of which gives type exactly ℕ or ℤ (`(n : ℕ)`, `∀ k : ℤ,`)."""
    typed: dict[str, set[str]] = {}
    items = tokens.items
    for index, token in enumerate(items):
        if token.text != ":" or index + 2 >= len(items):
            continue
        names = _names_before(items, index)
        end = items[index + 2].text
        type_name = items[index + 1].text if end in (")", "}", ",", "⦄") else "?"
        for name in names:
            typed.setdefault(name, set()).add(type_name)
    return {name for name, types in typed.items() if types <= INTEGER_TYPES}


def _names_before(items: list[Token], colon: int) -> list[str]:
    names: list[str] = []
    for token in reversed(items[max(0, colon - 16) : colon]):
        if token.kind is not Kind.IDENT:
            break
        names.append(token.text)
    return names


def _exponent_findings(tokens: Tokens, integers: set[str]) -> list[str]:
    items, found = tokens.items, []
    for index in range(len(items) - 1):
        if items[index].text == "^" and items[index + 1].text == "(":
            end = tokens.group_end(index + 1) - 1
            if end - (index + 2) > MAX_EXPONENT_TOKENS:
                continue
            inner = items[index + 2 : end]
            if _is_truncating_exponent(inner, integers):
                found.append(_exponent_message(" ".join(t.text for t in inner)))
            if len(found) >= MAX_FINDINGS:
                break
    return found


def _is_truncating_exponent(inner: list[Token], integers: set[str]) -> bool:
    if not any(_divides_a_numeral(inner, index) for index in range(1, len(inner))):
        return False
    if not all(_is_integer_part(token, integers) for token in inner):
        return False
    numbers = [token for token in inner if token.kind is not Kind.SYMBOL]
    # A bare numeral quotient that divides evenly (`4 / 2`) loses nothing.
    return not (len(inner) == 3 and len(numbers) == 2 and _divides_evenly(inner))


def _divides_a_numeral(inner: list[Token], index: int) -> bool:
    """`1 / n`, `4 / 19`: a numeral on its own divided. `(p - 1) / 2` or `m / 2` are
    usually meant as floors (of an even number), so they do not count."""
    if inner[index].text != "/" or inner[index - 1].kind is not Kind.NUMBER:
        return False
    return index < 2 or inner[index - 2].text in ("(", "+", "-")


def _is_integer_part(token: Token, integers: set[str]) -> bool:
    if token.kind is Kind.NUMBER:
        return "." not in token.text
    return token.text in integers if token.kind is Kind.IDENT else token.text in _ARITHMETIC


def _divides_evenly(quotient: list[Token]) -> bool:
    numerator, _, denominator = (token.text for token in quotient)
    if not (numerator.isdigit() and denominator.isdigit()):
        return False
    return int(denominator) != 0 and int(numerator) % int(denominator) == 0


def _exponent_message(exponent: str) -> str:
    return (
        f"the exponent `({_short(exponent)})` is computed in ℕ/ℤ, where `/` truncates "
        "(`1 / 3 = 0`); write e.g. `(1 / 3 : ℝ)` for a real exponent"
    )


def _literal_findings(tokens: Tokens, integers: set[str]) -> list[str]:
    found: list[str] = []
    for segment in _segments(tokens.items):
        quotients = [
            segment[i - 1 : i + 2]
            for i in range(1, len(segment) - 1)
            if segment[i].text == "/" and _is_uneven_numeral_quotient(segment[i - 1 : i + 2])
        ]
        if quotients and _is_integer_comparison(segment, integers):
            context = _short(" ".join(token.text for token in segment))
            found.extend(_literal_message(q, context) for q in quotients[:MAX_FINDINGS])
        if len(found) >= MAX_FINDINGS:
            break
    return found


def _is_uneven_numeral_quotient(quotient: list[Token]) -> bool:
    if not all(token.kind is Kind.NUMBER for token in (quotient[0], quotient[2])):
        return False
    return int(float(quotient[2].text)) != 0 and not _divides_evenly(quotient)


def _segments(items: list[Token]) -> list[list[Token]]:
    """The token runs between connectives, colons and non-round brackets.

    Round brackets do not split (they group arithmetic); a binder's `(h :` and `)` end up
    as a stray bracket at a segment's edge, which the arithmetic test accepts.
    """
    segments: list[list[Token]] = [[]]
    for token in items:
        if token.text in _SEGMENT_ENDS or (token.text in _NON_ROUND):
            segments.append([])
        else:
            segments[-1].append(token)
    return [segment for segment in segments if segment]


def _is_integer_comparison(segment: list[Token], integers: set[str]) -> bool:
    if not any(token.text in _COMPARISONS for token in segment):
        return False
    return all(token.text in _COMPARISONS or _is_integer_part(token, integers) for token in segment)


def _literal_message(quotient: list[Token], context: str) -> str:
    text = " ".join(token.text for token in quotient)
    return (
        f"`{text}` in `{context}` is computed in ℕ/ℤ, where it truncates; "
        "nothing in the comparison makes it real or rational"
    )


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
