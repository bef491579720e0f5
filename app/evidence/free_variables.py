"""Lint `auto_bound_variable`: a variable-like name the statement uses but never binds.

With `autoImplicit` on, Lean turns such a name into a fresh universally quantified
variable instead of failing, so the statement silently says something else:
- `n!` is one identifier, not `n !` (factorial), so `80325 ∣ n!` is about a new `n!`;
- `h0 : f x + f (x-1) = x^2` with no `∀ x` and no binder `x` holds at one point only.
Only names that look like variables are considered (one letter, then digits, subscripts
or primes, maybe `!`), since longer names are usually library constants we cannot see.
Binding is collected over the whole text, ignoring scope: a name bound anywhere counts as
bound everywhere, which can only hide a finding, never invent one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Set as AbstractSet
from itertools import compress

from app.evidence.binding import bound_names, notation_names
from app.evidence.finding import Detected, Span
from app.evidence.lean_source import Tokens, head, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

_VARIABLE_LIKE = re.compile(
    "[A-Za-zα-κμ-ωΑ-ΟΡΤ-Ω][0-9'\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a\u2c7c]*!?"
)
# Single-letter Mathlib notations (Real.pi, Complex.I, Polynomial.X/C, Nat.totient,
# ArithmeticFunction.sigma/cardDistinctFactors/cardFactors/vonMangoldt/moebius).
KNOWN_CONSTANTS = frozenset({"π", "I", "X", "C", "φ", "σ", "ω", "Ω", "Λ", "μ"})
MAX_FINDINGS = 5


def find_auto_bound(pair: Pair) -> list[Detected]:
    formal = lean_tokens(pair.formal)
    header = _bound_in_header(pair.header)
    # Each distinct name once, in order of first use; binding is read only if one may be free.
    used = dict.fromkeys(map(head, dict.fromkeys(compress(formal.texts, formal.idents()))))
    candidates = [name for name in used if _is_free(name, header)]
    if not candidates:
        return []
    bound = header | bound_names(formal) | notation_names(pair.formal)
    free = [name for name in candidates if name not in bound]
    return [Detected(_message(name), _first_use(formal, name)) for name in free[:MAX_FINDINGS]]


def _first_use(tokens: Tokens, name: str) -> Span | None:
    """The first token naming `name` (itself, or a dotted name it heads: `x.1`)."""
    heads = tokens.heads()
    index = heads.index(name) if name in heads else -1
    return token_span(tokens, "formal", index, index) if index >= 0 else None


# Many pairs of a batch share one header (imports, `open`): its names are read once.
@functools.lru_cache(maxsize=64)
def _bound_in_header(header: str) -> frozenset[str]:
    return frozenset(bound_names(lean_tokens(header)) | notation_names(header))


def _is_free(name: str, bound: AbstractSet[str]) -> bool:
    # `n!` is free unless the very name `n!` is bound: a bound `n` does not help.
    known = name in bound or name in KNOWN_CONSTANTS
    return not known and _VARIABLE_LIKE.fullmatch(name) is not None


def _message(name: str) -> str:
    if name.endswith("!"):
        return (
            f"`{name}` is one identifier that is never bound, so Lean makes it a new "
            f"variable; the factorial is written `{name[:-1]} !` or `({name[:-1]})!`"
        )
    return f"`{name}` is used but never bound, so Lean makes it a new implicit variable"
