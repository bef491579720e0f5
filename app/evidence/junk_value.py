"""Lint `junk_value`: a total function applied outside its domain, where the informal
text speaks of the real operation.

Mathlib's functions are total and answer a junk value off their domain:
`Real.sqrt x = 0` for `x < 0` (`Real.sqrt_eq_zero'`), `Real.log 0 = 0` and
`Real.log x = Real.log |x|` (`Real.log_zero`, `Real.log_abs`), `Real.logb b x` likewise,
`x / 0 = 0` and `0⁻¹ = 0` (`div_zero`, `inv_zero`), and `Nat.sqrt n` is `⌊√n⌋`. A statement
that applies one to a variable it never keeps in the domain can be proved (or refuted)
through the junk value (dev: `amc12a_2020_p10`, `amc12a_2021_p25`).

Fires only on the plainest shape: the argument (the denominator, the base of `⁻¹`) is one
variable whose every written type is `ℝ` (`ℕ` for `Nat.sqrt`), the statement never puts
that variable beside a comparison (`0 < x`, `x ≠ 0`, `1 ≤ x`, `x > 0`) or in a set
(`x ∈ Set.Ioi 0`) anywhere, and the informal text names the operation (`sqrt`, `√`,
`log`, `ln`, `\\frac`, `/`, `reciprocal`, ...). Anything else, an expression argument
above all, stays silent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from app.evidence.finding import Detected
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import TypeText, declared_types, token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
# Beside one of these a variable may be bounded or defined (`0 < x`, `h : x = 2`).
_GUARDS = frozenset(["<", "≤", ">", "≥", "≠", "∈", "="])
# An argument followed by one of these is only part of the argument (`b ^ 3`, `x.1`, `n !`).
_BINDS_TIGHTER = frozenset(["^", "⁻", "!", "."])
# A variable bound by an integral ranges over its domain, which may avoid the junk.
_INTEGRALS = frozenset(["∫", "⨍", "∮"])
_OPERATIONS = frozenset(["Real.sqrt", "√", "Real.log", "Real.logb", "/", "⁻", "Nat.sqrt"])
# What the informal text says when it speaks of each operation.
_SPOKEN = {
    "sqrt": re.compile(r"sqrt|√|square root|radical", re.IGNORECASE),
    "log": re.compile(r"\blog|\\ln\b|\bln\b|logarithm", re.IGNORECASE),
    "division": re.compile(r"/|\\frac|\\dfrac|divid|quotient|ratio|reciprocal", re.IGNORECASE),
    "inverse": re.compile(r"\^\s*\{?\s*-\s*1|reciprocal|inverse|\\frac\s*\{?\s*1", re.IGNORECASE),
}
_KIND = {
    "Real.sqrt": "sqrt",
    "√": "sqrt",
    "Nat.sqrt": "sqrt",
    "Real.log": "log",
    "Real.logb": "log",
    "/": "division",
    "⁻": "inverse",
}
_DOMAIN = {
    "Real.sqrt": "`0 ≤ {x}`",
    "√": "`0 ≤ {x}`",
    "Real.log": "`0 < {x}`",
    "Real.logb": "`0 < {x}`",
    "/": "`{x} ≠ 0`",
    "⁻": "`{x} ≠ 0`",
}
_JUNK = {
    "Real.sqrt": "`Real.sqrt` is 0 on negative numbers",
    "√": "`√` is 0 on negative numbers",
    "Real.log": "`Real.log` is 0 at 0 and `log |x|` below it",
    "Real.logb": "`Real.logb` is 0 at 0 and `logb b |x|` below it",
    "/": "`/ 0` is 0 in Lean",
    "⁻": "`0⁻¹` is 0 in Lean",
}


def find_junk_value(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    operations = tokens.positions(_OPERATIONS)
    if not operations:
        return []
    spoken = {kind for kind, said in _SPOKEN.items() if said.search(pair.informal)}
    if not spoken:
        return []
    applications = [
        (operation, argument)
        for operation, argument in _applications(tokens, operations)
        if _KIND[tokens.texts[operation]] in spoken
    ]
    if not applications:
        return []  # most pairs: the types and guards are never read
    types, guarded = declared_types(tokens), _guarded_names(tokens)
    found: dict[tuple[str, str], Detected] = {}
    for operation, argument in applications:
        text, name = tokens.texts[operation], tokens.texts[argument]
        if (text, name) not in found and _outside_domain(types, guarded, text, name):
            found[text, name] = _finding(tokens, text, name, operation, argument)
            if len(found) == MAX_FINDINGS:
                break
    return list(found.values())


def _applications(tokens: Tokens, operations: list[int]) -> Iterator[tuple[int, int]]:
    """(operation, argument) for each operation whose argument is one identifier."""
    texts, kinds, size = tokens.texts, tokens.kinds, len(tokens)
    for index in operations:
        text = texts[index]
        if text == "⁻":
            argument = index - 1
            if index + 1 < size and texts[index + 1] == "¹" and argument >= 0:
                yield index, argument
            continue
        argument = index + 2 if text == "Real.logb" else index + 1
        if argument < size and kinds[argument] is Kind.IDENT and not _applied(tokens, argument):
            yield index, argument


def _applied(tokens: Tokens, index: int) -> bool:
    """`f x`: the identifier at `index` is followed by an argument (an identifier, a
    number or an opening bracket), so it is a function, not the argument."""
    after = index + 1
    return after < len(tokens) and (
        tokens.kinds[after] is not Kind.SYMBOL or tokens.texts[after] in ("(", "[", *_BINDS_TIGHTER)
    )


def _outside_domain(
    types: dict[str, list[TypeText]], guarded: set[str], operation: str, name: str
) -> bool:
    wanted = ("ℕ",) if operation == "Nat.sqrt" else ("ℝ",)
    written = types.get(name, [])
    if not written or any(type_text != wanted for type_text in written):
        return False
    return operation == "Nat.sqrt" or name not in guarded


def _guarded_names(tokens: Tokens) -> set[str]:
    """The names written beside a comparison, `=` or `∈` somewhere (a hypothesis may bound
    or define them), or bound by an integral: found in one pass."""
    texts, size = tokens.texts, len(tokens)
    names = {texts[index + 1] for index in tokens.positions(_INTEGRALS) if index + 1 < size}
    for index in tokens.positions(_GUARDS):
        names.update(texts[max(0, index - 1) : index + 2 : 2] if index else texts[1:2])
    return names


def _finding(tokens: Tokens, operation: str, name: str, at: int, argument: int) -> Detected:
    first, last = sorted((at, argument))
    last = last + 1 if operation == "⁻" else last
    span = token_span(tokens, "formal", first, last)
    if operation == "Nat.sqrt":
        message = (
            f"`Nat.sqrt {name}` is the floor of the square root, not the real square root the "
            f"informal text speaks of; use `Real.sqrt {name}` or state that `{name}` is a square."
        )
        return Detected(message, span)
    domain = _DOMAIN[operation].format(x=name)
    message = (
        f"nothing keeps `{name}` in the domain here and {_JUNK[operation]}, so the statement "
        f"may hold or fail through that junk value; add the hypothesis {domain} if the "
        "informal text assumes it."
    )
    return Detected(message, span)
