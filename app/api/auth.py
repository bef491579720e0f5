"""The API's key check as FastAPI dependencies: who is calling (`Authorization: Bearer
<key>`) and may they. An HTTP adapter over app.auth, so it lives with the API.

    SubmitterKeyDep, ReviewerKeyDep, AdminKeyDep   a handler parameter: the key's Principal,
                                                   role checked
    submitter_access, ...                          for `APIRouter(dependencies=[...])`

No valid key (missing, malformed, unknown, revoked) -> 401 with `WWW-Authenticate: Bearer`;
a valid key with too low a role -> 403; both in the shared error shape. The key is looked
up in a short session of its own, not the request's: the request's unit of work stays
the handler's alone. With FAITHSCREEN_AUTH=off every request is the admin "anonymous".
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from app.api.deps import RuntimeDep
from app.auth import service
from app.auth.errors import Unauthorized, require_role
from app.auth.principal import ANONYMOUS, Principal
from app.models.api_key import AccessRole

_bearer = HTTPBearer(
    auto_error=False,
    description="An API key: `Authorization: Bearer fs_...` (`faithscreen keys create`).",
)
CredentialsDep = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def authenticate(
    request: Request, runtime: RuntimeDep, credentials: CredentialsDep
) -> Principal:
    if runtime.settings.auth == "off":
        return ANONYMOUS
    if credentials is None:
        raise Unauthorized(_no_bearer_key(request.headers.get("authorization")))
    async with runtime.sessions() as session:
        principal = await service.principal_for(session, credentials.credentials)
        await session.commit()  # the key's last_used_at, when it was due
    if principal is None:
        raise Unauthorized("the API key is not valid (unknown or revoked)")
    return principal


def _no_bearer_key(header: str | None) -> str:
    """Why no key was read: none sent, or one sent without the `Bearer` scheme (the
    header's value is not echoed: it may be the key)."""
    if header and header.strip():
        return (
            "the Authorization header must read 'Bearer <key>': a value was sent without "
            "the 'Bearer ' scheme"
        )
    return (
        "this endpoint needs an API key: send 'Authorization: Bearer <key>' "
        "(an admin creates keys with `faithscreen keys create`)"
    )


def require(needed: AccessRole) -> Callable[[Principal], Awaitable[Principal]]:
    """A dependency giving the caller's Principal if its role is `needed` or above."""

    async def check(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
        require_role(principal, needed)
        return principal

    return check


require_submitter = require(AccessRole.SUBMITTER)
require_reviewer = require(AccessRole.REVIEWER)
require_admin = require(AccessRole.ADMIN)
require_metrics = require(AccessRole.METRICS)

SubmitterKeyDep = Annotated[Principal, Depends(require_submitter)]
ReviewerKeyDep = Annotated[Principal, Depends(require_reviewer)]
AdminKeyDep = Annotated[Principal, Depends(require_admin)]

submitter_access = Depends(require_submitter)
reviewer_access = Depends(require_reviewer)
admin_access = Depends(require_admin)
metrics_access = Depends(require_metrics)  # a metrics key, or an admin's
