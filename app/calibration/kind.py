"""What a formal statement declares, for slicing calibration: its first declaration is a
`theorem` (theorem, lemma, example), a `definition` (def, abbrev) or `other`."""

from __future__ import annotations

import re

from app.evidence.declaration import DECLARATION_KEYWORDS, THEOREM_KEYWORDS
from app.evidence.lean_source import strip_comments_and_strings

DEFINITION_KEYWORDS = frozenset({"def", "abbrev"})
# A keyword standing alone: not part of a longer name (`my_theorem`, `Nat.def`).
FIRST_KEYWORD = re.compile(
    r"(?<![\w.'])(" + "|".join(sorted(DECLARATION_KEYWORDS)) + r")(?![\w.'])"
)


# What may hide a keyword from a plain search: a comment or a string before it.
HIDERS = ("--", "/-", '"')


def statement_kind(formal: str) -> str:
    found = FIRST_KEYWORD.search(formal)
    # Most statements open with their keyword; only text before it needs the full reading.
    if found is not None and any(hider in formal[: found.start()] for hider in HIDERS):
        found = FIRST_KEYWORD.search(strip_comments_and_strings(formal))
    if found is None:
        return "other"
    keyword = found.group(1)
    if keyword in THEOREM_KEYWORDS:
        return "theorem"
    return "definition" if keyword in DEFINITION_KEYWORDS else "other"
