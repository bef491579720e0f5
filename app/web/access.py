"""Who is using the review pages: the key in the cookie, checked on every request with the
same service the API uses, so a revoked key or a submitter key is refused at once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends

from app.api.deps import RuntimeDep
from app.auth import service as auth_service
from app.auth.principal import ANONYMOUS, AccessRole, Principal
from app.errors import AppError
from app.runtime import Runtime
from app.web.pages import PageProblem, SignInNeeded
from app.web.session import BrowserSession, read_session

BrowserDep = Annotated[BrowserSession, Depends(read_session)]
NOT_A_KEY = "That key is not valid: it is unknown, revoked, or mistyped."


@dataclass(frozen=True, slots=True)
class Reviewer:
    principal: Principal
    # False with FAITHSCREEN_AUTH=off: nobody signed in, every request is "anonymous".
    signed_in: bool


async def principal_of_key(runtime: Runtime, key: str) -> Principal | None:
    """Looked up in a short session of its own, as the API does: the page's unit of work
    stays the handler's alone."""
    async with runtime.sessions() as session:
        principal = await auth_service.principal_for(session, key)
        await session.commit()  # the key's last_used_at, when it was due
    return principal


def refuse_below_reviewer(principal: Principal) -> None:
    if not principal.allows(AccessRole.REVIEWER):
        raise PageProblem(
            AppError(
                403,
                "forbidden",
                f"Key '{principal.name}' has the {principal.role.value} role: the review "
                "pages need a reviewer or admin key.",
            )
        )


async def acting_reviewer(runtime: RuntimeDep, browser: BrowserDep) -> Reviewer:
    if runtime.settings.auth == "off":
        return Reviewer(ANONYMOUS, signed_in=False)
    if browser.key is None:
        raise SignInNeeded()
    principal = await principal_of_key(runtime, browser.key)
    if principal is None:
        raise SignInNeeded("Your key is no longer valid (unknown or revoked): sign in again.")
    refuse_below_reviewer(principal)
    return Reviewer(principal, signed_in=True)


ReviewerDep = Annotated[Reviewer, Depends(acting_reviewer)]
