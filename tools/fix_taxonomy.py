"""Defect classes of statement fixes, decided from the diff of one statement alone.

The tokens the fix removed and added (what lies between the longest common prefix and
suffix of the two token lists) decide the class; the first rule that matches wins, in the
order of `CLASSES`. This reads the fix, not the meaning: a fix that changes several things
gets the class of its first rule, and a fix that is no meaning change at all (a renamed
lemma) lands in `other` or wherever its tokens point.
"""

from __future__ import annotations

import re

TOKEN = re.compile(r"[A-Za-z_\u0370-\u03ff][\w.'!?\u2080-\u209c]*|[0-9]+|:=|\S")
NUMBER_TYPES = frozenset(
    [
        "ℕ",
        "ℤ",
        "ℚ",
        "ℝ",
        "ℂ",
        "ℝ≥0",
        "NNReal",
        "ENNReal",
        "EReal",
        "Nat",
        "Int",
        "Real",
        "Rat",
        "Complex",
    ]
)
RANGES = re.compile(r"^(Finset\.)?(range|Icc|Ico|Ioc|Ioo|Ici|Ioi|Iic|Iio)$|^Fin$|^Set\.I[co]")
EXTREMA = frozenset(
    ["IsLeast", "IsGreatest", "sSup", "sInf", "IsLUB", "IsGLB", "Maximal", "Minimal"]
)
CASTS = frozenset(
    ["↑", "Int.toNat", "Nat.cast", "Int.cast", "Int.natAbs", "Nat.floor", "Int.floor", "⌊", "⌋"]
)

# (class, what it means), in the order the rules are tried.
CLASSES: tuple[tuple[str, str], ...] = (
    ("binder_default", "a binder default `(x := v)` replaced by a hypothesis"),
    ("euclidean_distance", "`ℝ × ℝ` / `Fin n → ℝ` replaced by `EuclideanSpace`"),
    ("answer", "only the inlined answer (`abbrev …_solution`) changed"),
    ("constant", "only numerals changed"),
    ("number_type", "a number type changed (ℕ → ℤ, ℕ → ℝ, …)"),
    ("cast", "a cast or truncation (`↑`, `Int.toNat`, `⌊ ⌋`) added or removed"),
    ("range_bounds", "an interval, `Finset.range` or `Fin` bound changed"),
    ("extremum", "`IsLeast`/`IsGreatest`/`sSup`/`sInf` added or removed"),
    ("membership_iff", "a set's membership made an `↔` (the set fully determined)"),
    ("quantifier", "a `∀`/`∃` added, removed or swapped"),
    ("arithmetic", "an operator changed (`/`, `-`, `%`, `^`, `*`, `+`)"),
    ("hypothesis_added", "a hypothesis or conjunct added"),
    ("hypothesis_removed", "a hypothesis or conjunct removed"),
    ("other", "anything else (relations, functions, restructuring)"),
)


def tokens(text: str) -> list[str]:
    return TOKEN.findall(re.sub(r"/-.*?-/|--[^\n]*", " ", text, flags=re.S))


def changed(before: str, after: str) -> tuple[list[str], list[str]]:
    """The tokens removed from `before` and added in `after` (one differing region)."""
    old, new = tokens(before), tokens(after)
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[-1 - end] == new[-1 - end]:
        end += 1
    return old[start : len(old) - end], new[start : len(new) - end]


def classify(before: str, after: str) -> str:
    removed, added = changed(before, after)
    both = removed + added
    theorem_before = before[before.rfind("theorem") :]
    theorem_after = after[after.rfind("theorem") :]
    if _binder_defaults(before) > _binder_defaults(after):
        return "binder_default"
    if "EuclideanSpace" in added and "EuclideanSpace" not in removed:
        return "euclidean_distance"
    if "_solution" in before and tokens(theorem_before) == tokens(theorem_after):
        return "answer"
    if both and all(t.isdigit() for t in both):
        return "constant"
    if sorted(t for t in removed if t in NUMBER_TYPES) != sorted(
        t for t in added if t in NUMBER_TYPES
    ):
        return "number_type"
    return _by_tokens(removed, added, both)


def _by_tokens(removed: list[str], added: list[str], both: list[str]) -> str:
    if any(t in CASTS for t in both):
        return "cast"
    if any(RANGES.search(t) for t in both):
        return "range_bounds"
    if any(t in EXTREMA for t in both):
        return "extremum"
    if added.count("↔") > removed.count("↔"):
        return "membership_iff"
    if any(t in ("∀", "∃", "∃!") for t in both):
        return "quantifier"
    ops = ("/", "-", "%", "^", "*", "+", "∣")
    if [t for t in removed if t in ops] != [t for t in added if t in ops]:
        return "arithmetic"
    if len(added) > len(removed) and (":" in added or "∧" in added or "→" in added):
        return "hypothesis_added"
    if len(removed) > len(added) and (":" in removed or "∧" in removed or "→" in removed):
        return "hypothesis_removed"
    return "other"


def _binder_defaults(text: str) -> int:
    """How many `:=` stand inside brackets of the theorem (binder defaults; `let` aside)."""
    head, depth, count = tokens(text[text.rfind("theorem") :]), 0, 0
    for index, token in enumerate(head):
        depth += (token in "([{⟨") - (token in ")]}⟩")
        after_let = "let" in head[max(0, index - 4) : index]
        count += token == ":=" and depth > 0 and not after_let
    return count
