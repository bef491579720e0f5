"""Bodies of the API keys endpoints (`/v1/keys`): a key is shown whole once, when made."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.auth.service import CreatedKey
from app.models.api_key import AccessRole, ApiKey


class KeyOut(BaseModel):
    """A key as lists show it: never the key itself."""

    name: str
    role: AccessRole
    prefix: str = Field(description="The key's first characters, to tell keys apart.")
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None = Field(description="Updated at most once a minute.")

    @classmethod
    def of(cls, record: ApiKey) -> KeyOut:
        return cls(
            name=record.name,
            role=record.role,
            prefix=record.key_prefix,
            created_at=record.created_at,
            revoked_at=record.revoked_at,
            last_used_at=record.last_used_at,
        )


class KeyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(max_length=100)
    role: AccessRole


class KeyCreated(KeyOut):
    key: str = Field(description="The key: shown this once, stored only as a hash.")

    @classmethod
    def of_created(cls, created: CreatedKey) -> KeyCreated:
        return cls(**KeyOut.of(created.record).model_dump(), key=created.key)
