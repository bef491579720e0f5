"""What text from outside (a provider, a statement) needs before it goes where a rule holds.

UTF-8 (a JSON answer, a page, a metrics scrape) has no form for a lone surrogate, which a
provider can send as a `\\ud800` JSON escape; a bounded place (a column, a label) takes
its start and a mark saying how long it was. Stored replies keep their surrogates
(app/db/types.ProviderText with raw=True): only what is shown is replaced.
"""

from __future__ import annotations

import re

LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# What replaces the end of a value too long for its place.
CUT_MARK = "\u2026[cut from {} chars]"


def without_lone_surrogates(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD."""
    return LONE_SURROGATE.sub("\ufffd", text)
