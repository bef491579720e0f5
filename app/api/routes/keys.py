"""/v1/keys: admins list, create and revoke API keys (`faithscreen keys` does the same)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends

from app.api.auth import admin_access
from app.api.deps import SessionDep
from app.api.key_schemas import KeyCreated, KeyOut, KeyRequest
from app.api.request_body import JsonBody
from app.api.schemas import GUARDED_RESPONSES, error_responses
from app.auth import service

router = APIRouter(
    prefix="/v1/keys", tags=["keys"], dependencies=[admin_access], responses=GUARDED_RESPONSES
)
# Read after the key is checked (a router dependency), never before.
BODY = JsonBody(KeyRequest)


@router.get("", response_model=list[KeyOut])
async def list_keys(session: SessionDep) -> list[KeyOut]:
    """Every key, revoked ones included; never the keys themselves."""
    return [KeyOut.of(record) for record in await service.list_keys(session)]


@router.post(
    "",
    status_code=201,
    response_model=KeyCreated,
    responses=error_responses(400, 409, 413, 422),
    openapi_extra=BODY.openapi_extra(),
)
async def create_key(body: Annotated[KeyRequest, Depends(BODY)], session: SessionDep) -> KeyCreated:
    """A new key, returned this once (only its hash is stored). 409 if the name was used."""
    return KeyCreated.of_created(await service.create_key(session, body.name, body.role))


@router.delete("/{name}", response_model=KeyOut, responses=error_responses(404))
async def revoke_key(name: str, session: SessionDep) -> KeyOut:
    """Revoke the key: every request with it is refused (401) from now on."""
    return KeyOut.of(await service.revoke_key(session, name))
