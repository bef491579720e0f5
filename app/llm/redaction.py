"""Credentials taken out of what a provider said before anyone stores or shows it. Pure.

A gateway's error page may echo the request: its Authorization header, the key in a URL.
What a failed call returns (its body, its error text) is stored on the review and shown
by the API and the review pages, so the client redacts it first: the keys it was built
with, in any spelling a body may quote them in, `Bearer ...` values, `sk-...`-shaped
tokens, and URL credentials.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote

from faithscreen_client.credentials import mask_credentials_in_text

REDACTED = "[redacted]"
# The header value's characters (RFC 6750's b64token), after "Bearer" and some space.
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE)
# OpenAI-style keys (sk-..., sk-proj-..., sk-ant-...): long enough not to hit ordinary words.
_SK_TOKEN = re.compile(r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{16,}")


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret, bearer value and sk- token replaced by REDACTED."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        for spelling in _spellings(secret):
            text = text.replace(spelling, REDACTED)
    text = _BEARER.sub(rf"\g<1>{REDACTED}", text)
    return mask_credentials_in_text(_SK_TOKEN.sub(REDACTED, text))


def _spellings(secret: str) -> set[str]:
    """As sent, percent-encoded (a URL) and JSON-escaped (a body quoting the request)."""
    if not secret:
        return set()
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}
