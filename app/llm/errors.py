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
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"provider asked to wait {retry_after:.1f} s before calling again")
        self.retry_after = retry_after
