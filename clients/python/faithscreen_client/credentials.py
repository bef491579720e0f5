"""Credentials masked in URLs and free text (error messages, log lines).

It lives in the client package because the client masks its own base URL in the errors it
raises; the server (`app.settings`, its logs and commands) uses this same code, one copy
for both distributions. Standard library only.
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus

MASK = "***"
# Query parameters that carry a credential, compared lower-cased and percent-decoded:
# libpq's password and sslpassword, and the names providers and gateways take keys by.
CREDENTIAL_PARAMETERS = frozenset(
    {"password", "sslpassword", "api-key", "api_key", "apikey", "key", "token", "access_token"}
)
# Schemes whose user info without a password is a role name, not a credential.
_NAMED_USER_SCHEMES = frozenset({"postgresql", "postgres"})
_PARAMETER = re.compile(r"(?P<lead>[?&])(?P<name>[^=&#\s]+)=(?P<value>[^&#\s]*)")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S+")


def mask_url_credentials(url: str) -> str:
    """A URL with its credentials masked: the user info's password (`user:***@`; a user
    info with no password is masked whole, `***@`, except a database URL's role name) and
    the value of every credential query parameter (`?api-key=***`)."""
    return _mask_user_info(_PARAMETER.sub(_mask_parameter, url))


def mask_credentials_in_text(text: str) -> str:
    """Free text (a log line, an error message) with every URL's credentials masked, and
    every credential query parameter, even in a path with no scheme (`GET /x?token=...`)."""
    if "=" not in text and "@" not in text:
        return text
    text = _PARAMETER.sub(_mask_parameter, text)
    return _URL.sub(lambda found: _mask_user_info(found[0]), text)


def _mask_parameter(found: re.Match[str]) -> str:
    if unquote_plus(found["name"]).strip().lower() not in CREDENTIAL_PARAMETERS:
        return found[0]
    return f"{found['lead']}{found['name']}={MASK}"


def _mask_user_info(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    # The last "@": an unencoded "@" in the password must not cut it short (an "@" in the
    # path or query then masks too much, which is the safe side).
    creds, at, location = rest.rpartition("@")
    if not sep or not at:
        return url
    user, colon, _ = creds.partition(":")
    if colon and "/" not in user:
        shown = f"{user}:{MASK}"
    elif not colon and "/" not in creds and scheme.split("+")[0].lower() in _NAMED_USER_SCHEMES:
        shown = creds
    else:
        shown = MASK
    return f"{scheme}://{shown}@{location}"
