"""What one LLM call produced: the value the pipeline stores as a review's call metadata."""

from __future__ import annotations

from dataclasses import dataclass

from app.contract.provider_reply import ToolCall


@dataclass(frozen=True, slots=True)
class CallResult:
    """One `complete()` call, successful or not, with everything worth recording.

    `content` is exactly `choices[0].message.content` (never stripped or normalised).
    `latency_ms` covers the whole call: every attempt and every wait between attempts,
    from the moment the call held a concurrency slot (time queued for a slot in this
    process is not the provider's latency). `http_status` and `raw_body` are those of
    the final attempt (None when it got no response). `error` is set, and the reply
    fields are None, when the call failed; it starts with the kind of failure:
    "HTTP 500", "timeout", "connection error", "protocol error", "malformed body" or
    "reply too large" (a body past the provider's `max_response_bytes`: `raw_body` then
    holds its beginning only, app/llm/capped_body.py). A failed call's `raw_body` and
    `error` have credentials redacted (app/llm/redaction.py).
    """

    content: str | None
    finish_reason: str | None
    refusal: str | None
    usage: dict[str, int]
    model: str | None
    http_status: int | None
    latency_ms: int
    raw_body: str | None
    error: str | None
    attempts: int
    max_tokens: int
    # `choices[0].message.tool_calls`, arguments byte for byte (app/llm/body.py).
    tool_calls: tuple[ToolCall, ...] = ()

    @property
    def failed(self) -> bool:
        return self.error is not None

    @classmethod
    def not_sent(cls, error: str, *, max_tokens: int = 0) -> CallResult:
        """A failed call that never reached a provider (none configured, say)."""
        return cls(
            content=None,
            finish_reason=None,
            refusal=None,
            usage={},
            model=None,
            http_status=None,
            latency_ms=0,
            raw_body=None,
            error=error,
            attempts=0,
            max_tokens=max_tokens,
        )
