"""Lint `binder_default`: a binder with a default value in a theorem's signature.

`(x : T := v)` or `(x := v)` makes `x` an optional parameter (`optParam T v`): a caller
may leave it out and get `v`, but the theorem is still stated, and must be proved, for
every `x`. So the intended hypothesis `x = v` is not there. In a `def` or `abbrev` a
default is API design and is not reported. An auto-param `(h : P := by tac)` is still a
hypothesis `P` and is not reported either (its `by` block is dropped before the lints run,
so its `:=` is followed by the group's closer).
"""

from __future__ import annotations

from bisect import bisect_left

from app.evidence.declaration import THEOREM_KEYWORDS, binder_groups
from app.evidence.finding import Detected
from app.evidence.lean_source import CLOSERS, Kind, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
_DEFAULT = frozenset([":="])
# A `:=` after one of these in the group belongs to a local definition, not the binder.
_LOCAL_DEFINITIONS = frozenset(["let", "letI", "have", "haveI", "fun", "λ", "where"])


def find_binder_default(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    if not tokens.positions(_DEFAULT):
        return []
    found: list[Detected] = []
    for keyword in tokens.positions(THEOREM_KEYWORDS):
        start = keyword + 2 if _named(tokens, keyword) else keyword + 1
        for begin, end in binder_groups(tokens, start):
            default = _default_in(tokens, begin, end)
            if default is not None:
                found.append(_finding(tokens, begin, end, default))
                if len(found) == MAX_FINDINGS:
                    return found
    return found


def _named(tokens: Tokens, keyword: int) -> bool:
    return keyword + 1 < len(tokens) and tokens.kinds[keyword + 1] is Kind.IDENT


def _default_in(tokens: Tokens, begin: int, end: int) -> int | None:
    """The `:=` directly inside the group `tokens[begin:end]` that a value follows."""
    at_level = tokens.positions_by_depth(_DEFAULT).get(tokens.depths[begin], [])
    found = bisect_left(at_level, begin)
    if found == len(at_level) or at_level[found] >= end:
        return None
    default = at_level[found]
    local = tokens.positions(_LOCAL_DEFINITIONS)
    if bisect_left(local, default) > bisect_left(local, begin):
        return None
    after = tokens.texts[default + 1] if default + 1 < len(tokens) else ")"
    return None if after in CLOSERS else default


def _finding(tokens: Tokens, begin: int, end: int, default: int) -> Detected:
    names = tokens.texts[begin + 1 : tokens.ident_run_end(begin + 1)]
    name = names[0] if names else "x"
    value_end = end - 1 if tokens.texts[end - 1] in CLOSERS else end
    value = " ".join(tokens.texts[default + 1 : min(value_end, default + 9)]) or "…"
    message = (
        f"`{name}` has the default value `{_short(value)}`, which only makes it an optional "
        f"argument, so the theorem still holds for every `{name}`; state `{name} = …` "
        "as a hypothesis or substitute the value."
    )
    return Detected(message, token_span(tokens, "formal", begin, end - 1))


def _short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
