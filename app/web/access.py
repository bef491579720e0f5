"""Who is using the review pages: a sign-in starts a server-side session for a reviewer or
admin key, and every request finds the key behind its session and checks it again with the
service the API uses, so a revoked key, or an ended session, is refused at once."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncSession

from app.api.deps import RuntimeDep
from app.auth import service as auth_service
from app.auth.principal import ANONYMOUS, Principal
from app.clock import utcnow
from app.errors import AppError
from app.models.api_key import AccessRole
from app.repositories import web_sessions
from app.runtime import Runtime
from app.web.pages import PageProblem, SignInNeeded
from app.web.session import BrowserSession, new_session_token, read_session, session_token_hash

BrowserDep = Annotated[BrowserSession, Depends(read_session)]
NOT_A_KEY = "That key is not valid: it is unknown, revoked, or mistyped."
SESSION_ENDED = (
    "Your sign-in is no longer valid (signed out, expired, or its key was revoked or is "
    "unknown): sign in again."
)


@dataclass(frozen=True, slots=True)
class Reviewer:
    principal: Principal
    # False with FAITHSCREEN_AUTH=off: nobody signed in, every request is "anonymous".
    signed_in: bool


@dataclass(frozen=True, slots=True)
class SignIn:
    """What a pasted key got: None for no key at all; a token only for a key that may use
    the review pages."""

    principal: Principal | None
    token: str | None


# Each lookup runs in a short session of its own, as the API's key check does: the page's
# unit of work stays the handler's alone.


async def start_session(runtime: Runtime, key: str, *, replacing: str | None) -> SignIn:
    """Sign in with `key`: a new session for a reviewer or admin key, replacing the
    browser's current one (signing in as someone else ends the first sign-in)."""
    async with runtime.sessions() as session:
        record = await auth_service.active_key(session, key)
        if record is None:
            return SignIn(None, None)
        principal = await auth_service.acting_as(session, record)
        token = None
        if principal.allows(AccessRole.REVIEWER):
            seconds = runtime.settings.review_session_seconds
            token = await _open(session, record.id, timedelta(seconds=seconds), replacing)
        await session.commit()
    return SignIn(principal, token)


async def _open(
    session: AsyncSession, api_key_id: int, lifetime: timedelta, replacing: str | None
) -> str:
    now = utcnow()
    await web_sessions.remove_expired(session, now=now)  # sign-ins are rare: tidy up here
    await _remove(session, replacing)
    token, token_hash = new_session_token()
    await web_sessions.add(
        session,
        token_hash=token_hash,
        api_key_id=api_key_id,
        created_at=now,
        expires_at=now + lifetime,
    )
    return token


async def end_session(runtime: Runtime, token: str | None) -> None:
    """Sign out: the session's row is deleted, so its cookie, wherever copied, is void."""
    async with runtime.sessions() as session:
        await _remove(session, token)
        await session.commit()


async def _remove(session: AsyncSession, token: str | None) -> None:
    token_hash = session_token_hash(token) if token else None
    if token_hash is not None:
        await web_sessions.remove(session, token_hash)


async def principal_of_session(runtime: Runtime, token: str) -> Principal | None:
    """The Principal of a live session whose key is still unrevoked; None otherwise."""
    token_hash = session_token_hash(token)
    if token_hash is None:
        return None
    async with runtime.sessions() as session:
        record = await web_sessions.find_key(session, token_hash)
        principal = None if record is None else await auth_service.acting_as(session, record)
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
    if browser.token is None:
        raise SignInNeeded()
    principal = await principal_of_session(runtime, browser.token)
    if principal is None:
        raise SignInNeeded(SESSION_ENDED)
    refuse_below_reviewer(principal)
    return Reviewer(principal, signed_in=True)


# The review pages' reviewer, signed in by a browser session (the API's, by a bearer key,
# is app.api.auth.ReviewerKeyDep).
PageReviewerDep = Annotated[Reviewer, Depends(acting_reviewer)]


async def acting_admin(reviewer: Annotated[Reviewer, Depends(acting_reviewer)]) -> Reviewer:
    """The signed-in admin, for the admin pages (keys, batches): a reviewer's key gets the
    refusal every page gives a role too low (403, as a page), as /v1/keys does over the
    API. Batches are shown whole there, as the API shows them to admins: no item is blind
    to an admin."""
    if not reviewer.principal.allows(AccessRole.ADMIN):
        principal = reviewer.principal
        raise PageProblem(
            AppError(
                403,
                "forbidden",
                f"Key '{principal.name}' has the {principal.role.value} role: this page "
                "needs an admin key.",
            )
        )
    return reviewer


# The admin pages' admin (the API's is app.api.auth.AdminKeyDep).
PageAdminDep = Annotated[Reviewer, Depends(acting_admin)]
