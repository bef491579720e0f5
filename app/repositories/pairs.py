"""Stored pairs, deduplicated by content hash."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import cast

from sqlalchemy import Insert, Table, select
from sqlalchemy.dialects import postgresql, sqlite
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


# ---- Bulk, for batches ---------------------------------------------------------------------

# Hashes per SELECT ... IN (...): far below every database's limit on bound parameters.
HASHES_PER_SELECT = 500


async def get_or_create_many(session: AsyncSession, pairs: Sequence[Pair]) -> list[int]:
    """The stored ids of `pairs`, in order, inserting the new ones first; equal pairs share
    one row. One executemany of INSERT ... ON CONFLICT DO NOTHING (race-safe like
    `get_or_create`), then the ids looked up by hash."""
    hashes = [content_hash(pair) for pair in pairs]
    unique = dict(zip(hashes, pairs, strict=True))
    if unique:
        await session.execute(
            _insert_new_pairs(session), [_values(h, p) for h, p in unique.items()]
        )
    ids = await _ids_by_hash(session, list(unique))
    return [ids[key] for key in hashes]


def _values(key: str, pair: Pair) -> dict[str, str]:
    return {
        "content_hash": key,
        "informal": pair.informal,
        "formal": pair.formal,
        "header": pair.header,
    }


def _insert_new_pairs(session: AsyncSession) -> Insert:
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    return insert(cast(Table, PairRow.__table__)).on_conflict_do_nothing(
        index_elements=["content_hash"]
    )


async def _ids_by_hash(session: AsyncSession, hashes: list[str]) -> dict[str, int]:
    ids: dict[str, int] = {}
    for start in range(0, len(hashes), HASHES_PER_SELECT):
        chunk = hashes[start : start + HASHES_PER_SELECT]
        statement = select(PairRow.content_hash, PairRow.id).where(PairRow.content_hash.in_(chunk))
        ids.update((key, pair_id) for key, pair_id in (await session.execute(statement)).all())
    return ids
