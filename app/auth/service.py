"""Keys: create (the key is returned once, only its hash is stored), list, revoke, and
turn a presented key into the Principal it stands for. Used by the API and the CLI."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.auth.keys import generate_key, hash_key, key_prefix, well_formed
from app.auth.principal import ANONYMOUS, Principal
from app.errors import AppError, NotFound
from app.models.api_key import AccessRole, ApiKey
from app.repositories import api_keys, web_sessions

# Key names are recorded as the actor of decisions and shown in lists: short, no spaces.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")
FIRST_ADMIN_NAME = "admin"


@dataclass(frozen=True, slots=True)
class CreatedKey:
    record: ApiKey
    # The key itself: shown to its owner this once, never stored.
    key: str


def check_name(name: str) -> None:
    if not NAME_PATTERN.fullmatch(name):
        raise AppError(
            422,
            "invalid_key_name",
            f"key name {name!r}: 1 to 100 letters, digits and . _ @ + -, "
            "starting with a letter or digit",
        )
    if name == ANONYMOUS.name:
        raise AppError(422, "invalid_key_name", f"'{name}' is reserved for requests with auth off")


async def create_key(session: AsyncSession, name: str, role: AccessRole) -> CreatedKey:
    """A new key; 422 for a bad name, 409 if a key (even a revoked one) has this name."""
    check_name(name)
    key = generate_key()
    stored = await api_keys.add(
        session, name=name, role=role, key_hash=hash_key(key), key_prefix=key_prefix(key)
    )
    if not stored:
        raise AppError(
            409, "key_name_taken", f"a key named '{name}' exists (names are never reused)"
        )
    return CreatedKey(await _named(session, name), key)


async def create_first_admin_key(session: AsyncSession) -> CreatedKey | None:
    """An admin key named 'admin' when no key exists at all; None otherwise (also when
    another process created it at the same moment)."""
    if await api_keys.count(session):
        return None
    try:
        return await create_key(session, FIRST_ADMIN_NAME, AccessRole.ADMIN)
    except AppError:
        return None


async def list_keys(session: AsyncSession) -> list[ApiKey]:
    return await api_keys.list_all(session)


async def revoke_key(session: AsyncSession, name: str) -> ApiKey:
    """Revoke the named key (a revoked key stays revoked) and end its review-page
    sessions; 404 for an unknown name."""
    if not NAME_PATTERN.fullmatch(name):
        raise NotFound("key", repr(name))
    await api_keys.revoke(session, name)
    record = await _named(session, name)
    await web_sessions.remove_for_key(session, record.id)
    return record


async def principal_for(
    session: AsyncSession, key: str, *, now: datetime | None = None
) -> Principal | None:
    """The Principal of an unrevoked key; None for anything else."""
    record = await active_key(session, key)
    return None if record is None else await acting_as(session, record, now=now)


async def active_key(session: AsyncSession, key: str) -> ApiKey | None:
    """The stored, unrevoked key `key` is; None for anything else."""
    if not well_formed(key):
        return None
    return await api_keys.find_active(session, hash_key(key))


async def acting_as(
    session: AsyncSession, record: ApiKey, *, now: datetime | None = None
) -> Principal:
    """The Principal of an active key found for this request, its use noted."""
    await api_keys.touch(session, record, now=now)
    return Principal(record.name, record.role)


async def _named(session: AsyncSession, name: str) -> ApiKey:
    record = await api_keys.get_by_name(session, name)
    if record is None:
        raise NotFound("key", name)
    return record
