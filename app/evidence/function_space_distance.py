"""Lint `function_space_distance`: a distance, norm or ball on points whose type carries
the sup metric, where the informal text means the Euclidean one.

Mathlib puts the sup (max) metric on finite products: on `ℝ × ℝ` (`Prod.dist_eq`) and on
functions `Fin n → ℝ`, `ι → ℝ` (`dist_pi_def`, `pi_norm_le_iff`), so `dist p q` there is
`max |p.1 - q.1| |p.2 - q.2|`, not the length of the segment. `Euclidean.dist` goes through
an arbitrary linear equivalence with Euclidean space, which is not the Euclidean distance
either. `EuclideanSpace ℝ (Fin n)` is the type with the Euclidean distance.

Fires on `dist a b`, `Dist.dist a b`, `Euclidean.dist a b`, `Metric.ball a r`,
`Metric.closedBall a r`, `Metric.sphere a r` and `‖a - b‖`, when an argument is a name
(or a name applied to arguments, or `(e : T)`) whose every written type is such a point
type: a top-level product of real types, or `A → ℝ`. A name with no type written (or one
written `EuclideanSpace ...`) silences the lint.
"""

from __future__ import annotations

from app.evidence.declaration import read_declaration
from app.evidence.finding import Detected
from app.evidence.lean_source import Kind, Tokens, lean_tokens
from app.evidence.typed_names import (
    MAX_TYPE_TOKENS,
    TypeText,
    declared_types,
    member_types,
    merge,
    token_span,
    top_level_split,
    unwrapped,
)
from app.vocabulary import Pair

MAX_FINDINGS = 5
DISTANCES = frozenset(["dist", "Dist.dist", "Euclidean.dist"])
BALLS = frozenset(["Metric.ball", "Metric.closedBall", "Metric.sphere"])
_NORM = frozenset(["‖"])
_REAL = frozenset(["ℝ", "Real"])
_DEFINITIONS = frozenset(["def", "abbrev"])


def find_function_space_distance(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    distances = tokens.positions(DISTANCES | BALLS)
    norms = tokens.positions(_NORM)
    if not distances and not norms:
        return []
    types = declared_types(tokens)
    merge(types, member_types(tokens, types))
    merge(types, {"." + name: [result] for name, result in definition_results(tokens).items()})
    found: list[Detected] = []
    for index in distances:
        arity = 2 if tokens.texts[index] in DISTANCES else 1
        if _any_sup_point(tokens, types, _arguments(tokens, index + 1, arity)):
            found.append(_finding(tokens, index, tokens.texts[index]))
        if len(found) == MAX_FINDINGS:
            return found
    for index in norms:
        if _norm_of_difference(tokens, types, index):
            found.append(_finding(tokens, index, "‖·‖"))
        if len(found) == MAX_FINDINGS:
            break
    return found


def _arguments(tokens: Tokens, start: int, count: int) -> list[range]:
    """The next `count` arguments from `start`: a name, or a bracket group."""
    found: list[range] = []
    index = start
    while len(found) < count and index < len(tokens):
        end = tokens.group_end(index)
        if end == index + 1 and tokens.kinds[index] is not Kind.IDENT:
            break
        found.append(range(index, end))
        index = end
    return found


def _any_sup_point(tokens: Tokens, types: dict[str, list[TypeText]], args: list[range]) -> bool:
    return any(_is_sup_point(_argument_types(tokens, types, arg)) for arg in args)


def _argument_types(tokens: Tokens, types: dict[str, list[TypeText]], arg: range) -> list[TypeText]:
    """The types the statement writes for the argument `tokens[arg]`."""
    texts = tokens.texts
    if len(arg) == 1:
        text = texts[arg.start]
        if "." in text and text not in types:  # `x.asPoint`: what `def asPoint` returns
            return types.get("." + text.rpartition(".")[2], [])
        return types.get(text, [])
    inner = range(arg.start + 1, arg.stop - 1)
    if len(inner) >= 3 and texts[inner.start + 1] == ":":
        return [unwrapped(texts[inner.start + 2 : inner.stop])]  # `(e : T)`
    if len(inner) >= 2 and tokens.kinds[inner.start] is Kind.IDENT:
        applied = len(inner) - 1  # `(p i)`: one codomain step per argument token
        if applied == 1:
            return [_codomain(t) for t in types.get(texts[inner.start], [])]
    return []


def definition_results(tokens: Tokens) -> dict[str, TypeText]:
    """Each `def`'s (last name component ->) written result type: `def Site.asPoint (s :
    Site) : ℝ × ℝ := ...` gives `asPoint -> ℝ × ℝ`."""
    found: dict[str, TypeText] = {}
    for keyword in tokens.positions(_DEFINITIONS):
        if tokens.depths[keyword] != 0 or keyword + 1 >= len(tokens):
            continue
        declaration = read_declaration(tokens, keyword)
        if 0 < len(declaration.conclusion) <= MAX_TYPE_TOKENS:
            name = tokens.texts[keyword + 1].rpartition(".")[2]
            found[name] = unwrapped(
                tokens.texts[declaration.conclusion.start : declaration.conclusion.stop]
            )
    return found


def _codomain(type_text: TypeText) -> TypeText:
    parts = top_level_split(unwrapped(type_text), "→")
    return unwrapped(_rejoin(parts[1:])) if len(parts) >= 2 else ()


def _rejoin(parts: list[TypeText]) -> TypeText:
    joined: list[str] = []
    for position, part in enumerate(parts):
        if position:
            joined.append("→")
        joined.extend(part)
    return tuple(joined)


def _is_sup_point(type_texts: list[TypeText]) -> bool:
    return bool(type_texts) and all(map(_sup_point_type, type_texts))


def _sup_point_type(type_text: TypeText) -> bool:
    """`ℝ × ℝ` (a product of real types) or `A → ℝ`."""
    text = unwrapped(type_text)
    if not text or "EuclideanSpace" in text:
        return False
    arrows = top_level_split(text, "→")
    if len(arrows) == 2:
        return unwrapped(arrows[1]) in (("ℝ",), ("Real",)) and bool(arrows[0])
    factors = top_level_split(text, "×")
    return len(factors) >= 2 and all(_REAL.intersection(factor) for factor in factors)


def _norm_of_difference(tokens: Tokens, types: dict[str, list[TypeText]], index: int) -> bool:
    """`‖ a - b ‖` with `a` or `b` a sup-metric point."""
    texts = tokens.texts
    if index + 4 >= len(texts) or texts[index + 2] != "-" or texts[index + 4] != "‖":
        return False
    names = (texts[index + 1], texts[index + 3])
    return any(_is_sup_point(types.get(name, [])) for name in names)


def _finding(tokens: Tokens, index: int, operation: str) -> Detected:
    message = (
        f"`{operation}` here measures points whose type (`ℝ × ℝ` or `Fin n → ℝ`) carries "
        "Mathlib's sup metric, not the Euclidean distance; use `EuclideanSpace ℝ (Fin n)` "
        "if the informal text means Euclidean distance."
    )
    return Detected(message, token_span(tokens, "formal", index, index))
