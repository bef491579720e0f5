"""Reading a provider's response body, never past a cap.

A provider decides how many bytes it sends. A 50 MB reply once grew the server by 400 MB
and came back whole from GET /v1/screenings/{id} (issue 32), so the body is read in
chunks and reading stops at the provider's `max_response_bytes`, whatever Content-Length
says or does not say (aiohttp's read() would take it all). A body over the cap is a failed
call, "reply too large": it is never read as a verdict.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import aiohttp

from app.llm.redaction import redact

TOO_LARGE = "reply too large"
# Small reads: memory holds at most the cap plus one chunk, however fast bytes arrive.
_CHUNK_BYTES = 64 * 1024
# Characters dropped from the end of a cut body after redaction: a credential the cut
# splits leaves a prefix redact() cannot recognise, and any key is shorter than this.
_CUT_MARGIN = 512


@dataclass(frozen=True, slots=True)
class CappedBody:
    data: bytes  # the whole body, or its first `limit` bytes
    whole: bool  # False: the body was longer than the cap, and the rest was never read


async def read_capped(response: aiohttp.ClientResponse, limit: int) -> CappedBody:
    """The body, or its first `limit` bytes when it is longer (announced or not)."""
    declared = response.content_length
    if declared is not None and declared > limit:
        # Announced too large: the first `limit` bytes are kept for a person, no more.
        return CappedBody(await _read_at_most(response.content, limit), whole=False)
    data = await _read_at_most(response.content, limit + 1)  # one byte more says "longer"
    return CappedBody(data[:limit], whole=len(data) <= limit)


async def _read_at_most(stream: aiohttp.StreamReader, count: int) -> bytes:
    chunks: list[bytes] = []
    while count > 0 and (chunk := await stream.read(min(_CHUNK_BYTES, count))):
        chunks.append(chunk)
        count -= len(chunk)
    return b"".join(chunks)


def redact_cut(text: str, secrets: Iterable[str]) -> str:
    """A cut body, redacted, without the end where a split credential could hide."""
    return redact(text, secrets)[:-_CUT_MARGIN]


def too_large_detail(limit: int) -> str:
    """Why a body over the cap was not read as a reply (the same words for every such
    call, so a batch's failure causes count them as one)."""
    return (
        f"the body is longer than {limit} bytes (FAITHSCREEN_*_MAX_RESPONSE_BYTES); reading "
        "stopped there and its beginning is kept"
    )
