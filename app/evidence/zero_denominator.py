"""Lint `nat_zero_denominator`: a division by a natural-number variable that nothing keeps
away from 0.

`x / 0 = 0` in Lean, in `ℕ` and, after a cast, in `ℝ` (`Nat.div_zero`, `div_zero`): at
`n = 0`, `(1 : ℝ) / n` is 0 and `x ^ ((1 : ℝ) / n)` is 1, so a statement about
`(a₁ ⋯ aₙ)^{1/n}` holds or fails at `n = 0` through that junk value while the informal
text, which speaks of `a_1, …, a_n`, means `n ≥ 1` (PutnamBench `putnam_2003_a2` before its
fix 9cd2031, which added `0 < n`). The evidence-3 check `junk_value` reads the same shape
for a real variable; a variable typed `ℕ` was left to this one.

Fires when the denominator is one name every written type of which is `ℕ`, the name is
the whole denominator (not `n ^ 2`, `n !`, `f n`), the statement never puts it beside a
comparison, `=` or `∈` (`0 < n`, `n ≠ 0`, `1 ≤ n`, `n ∈ Finset.Icc 1 m`: those may keep it
away from 0), and the informal text divides (`/`, `\\frac`, "ratio", ...). Linear: the
names' types and the guarded names are read once, and each `/` looks at two tokens.
"""

from __future__ import annotations

import re

from app.evidence.finding import Detected
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import declared_types, token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
_DIVISION = frozenset(["/"])
# Beside one of these a variable may be bounded or defined (`0 < n`, `h : n = 2`).
_GUARDS = frozenset(["<", "≤", ">", "≥", "≠", "∈", "="])
# After the denominator, these make it part of a larger one (`n ^ 2`, `n !`, `n.succ`).
_BINDS_TIGHTER = frozenset(["^", "⁻", "!", ".", "(", "["])
_NATURAL = ("ℕ",)
_SPOKEN = re.compile(r"/|\\frac|\\dfrac|\\tfrac|divid|quotient|ratio|reciprocal", re.IGNORECASE)


def find_nat_zero_denominator(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    divisions = tokens.positions(_DIVISION)
    if not divisions or not _SPOKEN.search(pair.informal):
        return []
    denominators = [(at, at + 1) for at in divisions if _single_name(tokens, at + 1)]
    if not denominators:
        return []  # most pairs: the types and guards are never read
    types, guarded = declared_types(tokens), _guarded_names(tokens)
    found: dict[str, Detected] = {}
    for division, name_at in denominators:
        name = tokens.texts[name_at]
        written = types.get(name, [])
        if name in found or name in guarded or not written:
            continue
        if all(type_text == _NATURAL for type_text in written):
            found[name] = _finding(tokens, division, name_at, name)
            if len(found) == MAX_FINDINGS:
                break
    return list(found.values())


def _single_name(tokens: Tokens, index: int) -> bool:
    """The token at `index` is an identifier that is the whole denominator: no argument,
    power, factorial or field access follows it."""
    if index >= len(tokens) or tokens.kinds[index] is not Kind.IDENT:
        return False
    after = index + 1
    if after == len(tokens):
        return True
    return tokens.kinds[after] is Kind.SYMBOL and tokens.texts[after] not in _BINDS_TIGHTER


def _guarded_names(tokens: Tokens) -> set[str]:
    """The names written beside a comparison, `=` or `∈` anywhere: found in one pass."""
    texts, names = tokens.texts, set()
    for index in tokens.positions(_GUARDS):
        names.update(texts[max(0, index - 1) : index + 2 : 2] if index else texts[1:2])
    return names


def _finding(tokens: Tokens, division: int, name_at: int, name: str) -> Detected:
    message = (
        f"`/ {name}` divides by `{name} : ℕ` and nothing keeps `{name}` away from 0, where "
        f"Lean's `x / 0` is 0, so the statement may hold or fail at `{name} = 0` through that "
        f"junk value; add `0 < {name}` if the informal text assumes it."
    )
    return Detected(message, token_span(tokens, "formal", division, name_at))
