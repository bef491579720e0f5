"""The Idempotency-Key rules, one copy for single screenings and batches: a repeat with the
same key and the same body (byte for byte) gets what the first request stored, and
stores nothing; the same key with another body is refused (409 `idempotency_key_reused`).

Each path keeps its keys where it stores them (a batch on its row, a single screening in
screening_keys, for a window) and asks these two questions of what it finds."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from app.errors import AppError

Found = TypeVar("Found")


@dataclass(frozen=True, slots=True)
class Keyed:
    """A request's Idempotency-Key and the digest of its body."""

    key: str
    body_sha256: str

    @classmethod
    def of(cls, key: str | None, body: bytes) -> Keyed | None:
        return None if key is None else cls(key, body_digest(body))


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def check_repeat(what: str, earlier_id: str, earlier_sha256: str, body_sha256: str) -> None:
    """Nothing for a true repeat of the request that stored `what` `earlier_id`; 409 when
    the key came with another body."""
    if earlier_sha256 != body_sha256:
        raise AppError(
            409,
            "idempotency_key_reused",
            f"this Idempotency-Key was used for {what} {earlier_id} with a different body; "
            f"use a new key for a new {what}",
        )


async def held_by(find: Callable[[], Awaitable[Found | None]], key: str) -> Found:
    """What holds `key` after storing under it found it taken: another request with this
    key committed while this one was checking (the store waited for it)."""
    found = await find()
    if found is None:
        raise RuntimeError(f"nothing holds Idempotency-Key {key!r} after a conflict on it")
    return found
