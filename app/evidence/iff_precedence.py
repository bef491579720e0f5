"""Lint `implication_in_iff`: a `→` and a `↔` at one bracket level, with nothing between
them that ends either one's operand.

`↔` binds looser than `→` (Lean 4: `↔` is `infix:20` in `Init/Core.lean`, the arrow
`checkPrec 25 >> " → " >> termParser 25` in `Lean/Parser/Term.lean`), so `h → A ↔ B`
is `(h → A) ↔ B` and `A ↔ h → B` is `A ↔ (h → B)`.
Written so, a condition meant for the whole equivalence (`∀ i, i + 2 < k → (A ↔ B)`,
`a ≠ 0 → (S a ↔ E a)`) becomes part of one side: PutnamBench `putnam_2023_b3` before
its fix 9f8cf2b, `putnam_1977_a2` before 25bc648. Fires when, from a `↔`, the nearest
token at its own level (within its bracket group) towards either side that is a `→` comes
before any `,`, `:`, `:=`, `|`, `=>`, `↦`, `;`, `then`, `else` or another `↔` (each ends
an operand: a binder's body, a type, a set-builder's condition). Brackets around either
operand (`a ≠ 0 → (A ↔ B)`, `(h → A) ↔ B`) silence it: that is how to write either
reading on purpose. Linear: the marks at each bracket depth are found once and every
`↔` looks up its neighbours by binary search.
"""

from __future__ import annotations

from bisect import bisect_left

from app.evidence.finding import Detected
from app.evidence.lean_source import OPENERS, Tokens, lean_tokens
from app.evidence.typed_names import token_span
from app.vocabulary import Pair

MAX_FINDINGS = 5
_IFF = frozenset(["↔"])
_ARROW = "→"
# Each ends the operand of a `→` or `↔` written before or after it at the same level.
_OPERAND_ENDS = frozenset([",", ":", ":=", "|", "=>", "↦", ";", "then", "else", "↔"])
# At one depth, in order: operand ends, arrows, and the openers of groups at that depth
# (an opener's depth is the one after it, so it is listed with the group it opens).
_MARKS = _OPERAND_ENDS | {_ARROW} | OPENERS


def find_implication_in_iff(pair: Pair) -> list[Detected]:
    tokens = lean_tokens(pair.formal)
    iffs = tokens.positions(_IFF)
    if not iffs or not tokens.positions(frozenset([_ARROW])):
        return []
    marks = tokens.positions_by_depth(_MARKS)
    found: list[Detected] = []
    for iff in iffs:
        arrow = _arrow_beside(tokens, marks.get(tokens.depths[iff], []), iff)
        if arrow >= 0:
            found.append(_finding(tokens, iff, arrow))
            if len(found) == MAX_FINDINGS:
                break
    return found


def _arrow_beside(tokens: Tokens, marks: list[int], iff: int) -> int:
    """The `→` that the `↔` at `iff` takes into one of its operands, or -1."""
    texts, place = tokens.texts, bisect_left(marks, iff)  # marks[place] is `iff` itself
    before = marks[place - 1] if place > 0 else -1
    if before >= 0 and texts[before] == _ARROW:
        return before
    after = marks[place + 1] if place + 1 < len(marks) else -1
    # A mark after the group closes is in a sibling group at the same depth.
    if after >= 0 and texts[after] == _ARROW and after < tokens.level_close(iff + 1):
        return after
    return -1


def _finding(tokens: Tokens, iff: int, arrow: int) -> Detected:
    if arrow < iff:
        message = (
            "`h → A ↔ B` reads as `(h → A) ↔ B`, since `↔` binds looser than `→`; if `h` "
            "is a condition for the equivalence, write `h → (A ↔ B)`."
        )
    else:
        message = (
            "`A ↔ h → B` reads as `A ↔ (h → B)`, since `↔` binds looser than `→`; if `h` "
            "is a condition for the equivalence, write `h → (A ↔ B)`."
        )
    return Detected(message, token_span(tokens, "formal", iff, iff))
