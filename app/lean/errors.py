"""The Lean checker's one exception: a wait longer than one check should hold a slot for.

Every other failure (unreachable, 401, 5xx after the retries, a body that is not Kimina's)
is a `LeanCall` whose reading is `unavailable`: stored, and never a pass.
"""

from __future__ import annotations

from app.llm.errors import ProviderBackoff


class LeanBackoff(ProviderBackoff):
    """The Lean server asked to wait longer than a check waits inside one call.

    A ProviderBackoff, so the worker puts the screening's job back for that long without
    counting an attempt, exactly as for a provider's Retry-After (app/worker/causes.py).
    """

    def describe(self) -> str:
        # The provider's words first: a waiting screening's note is read by them
        # (app/repositories/provider_waits.py); the server that asked follows.
        return f"{super().describe()}: the Lean server"
