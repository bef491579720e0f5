"""The Lean checker: sends a pair's `header + formal` to a Kimina Lean Server's
`POST /api/check` and describes the answer (docs/lean.md).

    async with LeanClient(settings.lean) as lean:
        call = await lean.check(snippet_id, snippet_code(pair))
        reading = read_call(call)  # status ok / error / timeout / unavailable, messages, goal
"""

from app.lean.body import (
    LEAN_READER_VERSION,
    LeanMessage,
    LeanReading,
    read_body,
    read_call,
    snippet_code,
)
from app.lean.call import LeanCall
from app.lean.client import LeanClient
from app.lean.errors import LeanBackoff

__all__ = [
    "LEAN_READER_VERSION",
    "LeanBackoff",
    "LeanCall",
    "LeanClient",
    "LeanMessage",
    "LeanReading",
    "read_body",
    "read_call",
    "snippet_code",
]
