"""The seam through which a deployment-wide provider budget admits each attempt.

The client never touches the database: it asks a `CallGate` to let one attempt through
(which may wait, or raise `ProviderBackoff` when the wait would be long) and tells the
`Pass` it got what the attempt used and whether the provider asked everyone to pause.
app/budgets implements it on the database; `OPEN_GATE` admits everything at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Protocol

# A rough prompt size before the call: a token is about four characters of English and
# fewer of Lean or other Unicode, so three keeps the estimate on the high side. It is
# corrected from the reply's `usage` once the call ends.
CHARS_PER_TOKEN = 3

# Whether the calls made in this context are a batch screening's: the worker sets it for
# the task that runs a claimed screening. A budget lets batch calls reserve only a short
# way ahead (app/llm/budget.py), so interactive calls are not queued behind them.
BATCH_CALLS: ContextVar[bool] = ContextVar("faithscreen_batch_calls", default=False)


class Pass(Protocol):
    """One admitted attempt. `leave` is called exactly once, when the attempt ended."""

    async def leave(self, *, used_tokens: int | None, pause_seconds: float | None) -> None:
        """`used_tokens`: what the provider reported (None when it reported nothing);
        `pause_seconds`: how long the provider asked everyone to wait (None: no ask)."""
        ...


class CallGate(Protocol):
    async def enter(self, tokens: int) -> Pass:
        """Admit one attempt estimated at `tokens`, once the budget allows it; raises
        app.llm.errors.ProviderBackoff when that would take longer than one call waits."""
        ...

    @property
    def limits_requests(self) -> bool:
        """True when the gate spaces requests itself (the client then does not)."""
        ...


class _OpenPass:
    async def leave(self, *, used_tokens: int | None, pause_seconds: float | None) -> None:
        return None


class _OpenGate:
    async def enter(self, tokens: int) -> Pass:
        return _OpenPass()

    @property
    def limits_requests(self) -> bool:
        return False


OPEN_GATE: CallGate = _OpenGate()


def estimated_tokens(messages: Sequence[Mapping[str, object]], max_tokens: int) -> int:
    """Prompt tokens guessed from the messages' text, plus the whole completion allowance
    (providers count `max_tokens` against a tokens-per-minute limit when a call starts)."""
    chars = 0
    for message in messages:
        content = message.get("content")
        chars += len(content) if isinstance(content, str) else 0
    return -(-chars // CHARS_PER_TOKEN) + max_tokens


def used_tokens(usage: Mapping[str, int | None]) -> int | None:
    """What a reply's `usage` says the call cost: total_tokens, else prompt + completion."""
    total = usage.get("total_tokens")
    if isinstance(total, int):
        return total
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    if isinstance(prompt, int) and isinstance(completion, int):
        return prompt + completion
    return None
