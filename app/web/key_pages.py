"""/review/keys: an admin lists, creates and revokes API keys on a page, by the rules of
/v1/keys and `faithscreen keys`: the same service (app/auth/service.py) with the same
checks (a name's shape, never reused; a revoked key's sessions ended), the API's request
body (KeyRequest) reading the form, and what they store, no more (the key's hash, its
creation and revocation times).

A new key is shown once, on the page that answers the post: it is never stored, so there
is nothing to redirect to. That page is not cached (no-store, as every page); a reload
posts again and is refused, as the name is taken. A revocation follows post/redirect/get.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from app.api.deps import SessionDep
from app.api.key_schemas import KeyCreated, KeyOut, KeyRequest
from app.auth import service
from app.errors import AppError
from app.intake.requests import plain_message
from app.models.api_key import ROLES
from app.web.access import BrowserDep, PageAdminDep, Reviewer
from app.web.pages import PageProblem, context_for, render
from app.web.routes import guarded_form

router = APIRouter(prefix="/review", include_in_schema=False)
# Fixed wording for `?done=`: a query parameter never puts its own text on the page.
DONE_MESSAGES = {"revoked": "Revoked: every request with that key is refused from now on."}


def _problem(error: AppError) -> PageProblem:
    return PageProblem(error, back_url="/review/keys", back_label="Back to the keys")


async def _page(
    request: Request,
    session: AsyncSession,
    admin: Reviewer,
    browser: BrowserDep,
    *,
    status_code: int = 200,
    **extra: Any,
) -> Response:
    keys = [KeyOut.of(record) for record in await service.list_keys(session)]
    context = context_for(
        admin.principal, admin.signed_in, keys=keys, roles=ROLES, form={}, created=None
    )
    return render(request, browser, "keys.html", context | extra, status_code=status_code)


@router.get("/keys")
async def keys_page(
    request: Request, session: SessionDep, admin: PageAdminDep, browser: BrowserDep
) -> Response:
    message = DONE_MESSAGES.get(request.query_params.get("done", ""))
    return await _page(request, session, admin, browser, message=message)


def _key_request(form: dict[str, str]) -> KeyRequest:
    """The form read by the API's own body (a role outside the list is refused there)."""
    try:
        return KeyRequest.model_validate({"name": form.get("name", ""), "role": form.get("role")})
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {plain_message(e)}" for e in error.errors()
        )
        raise AppError(422, "validation_error", problems) from error


@router.post("/keys")
async def create_key(
    request: Request, session: SessionDep, admin: PageAdminDep, browser: BrowserDep
) -> Response:
    form = await guarded_form(request, browser)
    try:
        body = _key_request(form)
        created = KeyCreated.of_created(await service.create_key(session, body.name, body.role))
    except AppError as error:
        # The keys page again, the refusal on it and the form as it was typed, so a name
        # can be corrected; nothing was stored (the session dependency rolls back).
        await session.rollback()
        fields = {"name": form.get("name", "")[:100], "role": form.get("role", "")}
        return await _page(
            request, session, admin, browser, status_code=error.status_code,
            error=error.message, form=fields,
        )  # fmt: skip
    return await _page(request, session, admin, browser, status_code=201, created=created)


@router.post("/keys/{name}/revoke")
async def revoke_key(
    name: str, request: Request, session: SessionDep, admin: PageAdminDep, browser: BrowserDep
) -> Response:
    await guarded_form(request, browser)
    try:
        await service.revoke_key(session, name)
    except AppError as error:
        raise _problem(error) from error
    return RedirectResponse("/review/keys?done=revoked", status_code=303)
