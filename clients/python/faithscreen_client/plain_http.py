"""Refusing to send an API key over plain http to another machine.

A key sent as `Authorization: Bearer fs_...` over http crosses every network between the
client and the server in clear text: anyone on the way can read it and act as its holder.
Over loopback (localhost, 127.0.0.0/8, ::1) it never leaves the machine, and a transport
that stays in the process (ASGI, WSGI, a mock) sends nothing at all; anywhere else the
client wants https, or an explicit `allow_insecure_http=True`, which it then warns about.
"""

from __future__ import annotations

import warnings
from urllib.parse import urlsplit

import httpx2

from faithscreen_client.credentials import mask_url_credentials
from faithscreen_client.errors import FaithScreenError
from faithscreen_client.loopback import is_loopback_host

_IN_PROCESS = (httpx2.ASGITransport, httpx2.WSGITransport, httpx2.MockTransport)


class InsecureHttpWarning(UserWarning):
    """An API key is about to travel over plain http to another machine, as asked."""


def check_key_transport(
    base_url: str, api_key: str | None, transport: object, *, allow_insecure_http: bool
) -> None:
    """FaithScreenError `insecure_http` when `api_key` would go over plain http to a host
    that is not loopback; with `allow_insecure_http`, an InsecureHttpWarning instead."""
    if not api_key or isinstance(transport, _IN_PROCESS) or not _plain_remote(base_url):
        return
    where = mask_url_credentials(base_url)
    if not allow_insecure_http:
        raise FaithScreenError(
            None,
            "insecure_http",
            f"refusing to send the API key in clear text to {where}: use https://, or reach "
            "the server over loopback (an SSH tunnel to 127.0.0.1), or pass "
            "allow_insecure_http=True if every network on the way is yours",
        )
    warnings.warn(
        f"FaithScreen client: the API key goes in clear text over plain http to {where}; "
        "anyone on the network between can read it and use it",
        InsecureHttpWarning,
        stacklevel=3,
    )


def _plain_remote(base_url: str) -> bool:
    """Whether `base_url` is http:// to a host that is not loopback."""
    parts = urlsplit(base_url.strip())
    if parts.scheme.lower() != "http":
        return False
    return not is_loopback_host(parts.hostname or "")
