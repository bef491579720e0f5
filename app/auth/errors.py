"""Authentication and authorization errors. Framework-free, like app.errors."""

from __future__ import annotations

from app.auth.principal import Principal
from app.errors import AppError
from app.models.api_key import AccessRole

# What a 401 answers with: the scheme and realm a client should authenticate with.
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="faithscreen"'}


class Unauthorized(AppError):
    """No valid key: missing, malformed, unknown or revoked (401, with WWW-Authenticate)."""

    def __init__(self, message: str) -> None:
        super().__init__(401, "unauthorized", message, headers=CHALLENGE)


class Forbidden(AppError):
    """A valid key whose access role is not enough for what it asked (403)."""

    def __init__(self, principal: Principal, needed: AccessRole) -> None:
        super().__init__(
            403,
            "forbidden",
            f"this needs the {needed.value} role or above; "
            f"key '{principal.name}' has the {principal.role.value} role",
        )


def require_role(principal: Principal, needed: AccessRole) -> None:
    if not principal.allows(needed):
        raise Forbidden(principal, needed)
