"""Which host names and addresses are this machine: localhost, 127.0.0.0/8 and ::1.

One definition for the client (may a key go over plain http to it?) and the server (may a
request name it while FAITHSCREEN_AUTH=off?), so the two never disagree. Standard library
only, as credentials.py: the server imports it from the client's package.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback_host(host: str) -> bool:
    """`localhost`, an address in 127.0.0.0/8, or ::1 (brackets allowed). A name under
    .localhost is not: only a resolver that knows RFC 6761 keeps it on this machine."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_of_header(value: str) -> str:
    """The host of a Host header (`name`, `name:port`, `[v6]`, `[v6]:port`); "" when it
    has none of those shapes."""
    value = value.strip()
    if value.startswith("["):
        inside, bracket, rest = value[1:].partition("]")
        return inside if bracket and (not rest or _is_port(rest)) else ""
    name, colon, port = value.partition(":")
    if colon and not port.isdigit():
        return ""  # a bare IPv6 address, or a port that is not one
    return name


def is_loopback_origin(origin: str) -> bool:
    """Whether an Origin header names a page served from this machine (http or https)."""
    try:
        parts = urlsplit(origin.strip())
        parts.port  # noqa: B018 (raises ValueError for a port that is not one)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and is_loopback_host(parts.hostname or "")


def _is_port(rest: str) -> bool:
    return rest.startswith(":") and rest[1:].isdigit()
