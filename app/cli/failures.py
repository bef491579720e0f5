"""What a batch command says once the batch is done and screenings failed: one line per
failure cause, and whether nothing that needed a provider was screened at all.

Read from a batch's progress body (`GET /v1/batches/{id}`, or the same body built here
for `screen` and local `eval run`), so over HTTP and locally the lines are the same:

    58 of 60 screenings: translator_provider_error — connection error after 4 attempts: ...

A mistyped base URL must not quietly fill the review queue with provider errors: when
every screening that needed a provider ended in one, the command exits 3.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EXIT_PROVIDERS_FAILED = 3
# One cause, one line: a provider's error body excerpt is cut here.
MAX_ERROR_CHARS = 300


def failure_lines(body: Mapping[str, Any]) -> list[str]:
    """`N of TOTAL screenings: REASON — ERROR`, most frequent cause first."""
    total = body.get("total", 0)
    return [
        f"{failure['count']} of {total} screenings: {failure['reason']} — "
        f"{_one_line(str(failure['error']))}"
        for failure in body.get("failures") or []
    ]


def providers_failed(body: Mapping[str, Any]) -> str | None:
    """Why the command fails when every screening that needed a provider ended in a
    provider error; None otherwise (supplied replies never need one)."""
    needed = int(body.get("needed_provider") or 0)
    failed = int(body.get("provider_failed") or 0)
    if needed == 0 or failed < needed:
        return None
    every = "the 1 screening" if needed == 1 else f"all {needed} screenings"
    return (
        f"{every} that needed a provider ended in a provider error, so nothing was "
        "screened; fix the provider settings (`faithscreen providers check` tries them)"
    )


def _one_line(error: str) -> str:
    text = " ".join(error.split())
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
