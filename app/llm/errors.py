"""The LLM client's exception tree: small on purpose.

A call that fails in an ordinary way (HTTP 500 after the retries, a timeout, a reset
connection, a malformed body) is not an exception: `LLMClient.complete` returns a
`CallResult` whose `error` says what happened, and the pipeline records it as a
`provider_error` review. Only what the caller must act on differently is raised.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base of every error the LLM client raises."""


class ProviderBackoff(LLMError):
    """The provider asked us to wait longer than the client waits inside one call.

    The caller gives its worker slot back and reschedules the whole screening no earlier
    than `retry_after` seconds from now; no review is recorded for the abandoned call.
    `asked` is what the provider asked for, when more than the cap `retry_after` allows
    (the provider's `max_retry_after_seconds`); None when it was granted as asked.
    `budget` names the limit of the provider's shared budget (app/budgets) that makes
    the wait, when it is that budget rather than a reply of this call's.
    """

    def __init__(
        self, retry_after: float, *, asked: float | None = None, budget: str | None = None
    ) -> None:
        self.retry_after = retry_after
        self.asked = asked
        self.budget = budget
        super().__init__(self.describe())

    def describe(self) -> str:
        """What a waiting screening says: "provider asked to wait 999999 s (capped at 300 s)"."""
        if self.budget is not None:
            return f"provider asked to wait {_seconds(self.retry_after)} s ({self.budget})"
        if self.asked is None:
            return f"provider asked to wait {_seconds(self.retry_after)} s"
        asked, cap = _seconds(self.asked), _seconds(self.retry_after)
        return f"provider asked to wait {asked} s (capped at {cap} s)"


def _seconds(value: float) -> str:
    # Whole seconds, but a wait of 1e300 s (or inf) in a few characters, not 301 digits.
    return f"{value:.0f}" if value < 1e9 else f"{value:.3g}"
