"""Stored pairs, deduplicated by content hash."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.models.pair import PairRow
from app.repositories.conflicts import insert_unless_exists
from app.vocabulary import Pair


def content_hash(pair: Pair) -> str:
    """sha256 over the three fields, each prefixed by its length in bytes, so that no
    text can move across a field boundary and collide ("ab"+"c" vs "a"+"bc")."""
    digest = hashlib.sha256()
    for field in (pair.informal, pair.formal, pair.header):
        data = field.encode("utf-8")
        digest.update(f"{len(data)}:".encode("ascii"))
        digest.update(data)
    return digest.hexdigest()


async def get_or_create(session: AsyncSession, pair: Pair) -> PairRow:
    """The stored row for `pair`, inserting it first if it is new."""
    key = content_hash(pair)
    values = {
        "content_hash": key,
        "informal": pair.informal,
        "formal": pair.formal,
        "header": pair.header,
    }
    await insert_unless_exists(session, PairRow, values, ["content_hash"])
    return (await session.execute(select(PairRow).where(PairRow.content_hash == key))).scalar_one()
