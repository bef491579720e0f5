"""Fences for untrusted text: tags whose names carry a code that the fenced text lacks.

The code is derived from the texts themselves (same texts, same code, so the same pair
always gives the same messages and the same hash), and is chosen so that it occurs in none
of them, compared case-insensitively. Text that does not contain the code cannot hold an
opening or closing tag carrying it, so it cannot close its fence early, whatever it holds.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence

# 64 bits: a text would need about 2^64 distinct 16-character substrings to hold every
# candidate, far beyond any statement we accept, so the search below ends at once.
CODE_LENGTH = 16


def fence_code(texts: Sequence[str], length: int = CODE_LENGTH) -> str:
    """A lowercase hex code, deterministic in `texts`, that occurs in none of them."""
    # ensure_ascii keeps lone surrogates encodable; json keeps ["ab"] apart from ["a", "b"].
    seed = hashlib.sha256(json.dumps(list(texts)).encode("ascii")).hexdigest()
    folded = [text.casefold() for text in texts]
    candidates = (
        hashlib.sha256(f"{attempt}:{seed}".encode("ascii")).hexdigest()[:length]
        for attempt in itertools.count()
    )
    return next(code for code in candidates if not any(code in text for text in folded))
