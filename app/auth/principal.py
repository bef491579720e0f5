"""Who is acting: a key's name and its access role (AccessRole, defined with the api_keys
table). No I/O."""

from __future__ import annotations

from dataclasses import dataclass

from app.models.api_key import AccessRole


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller of one request: the key's name (recorded as actor and claimant) and role."""

    name: str
    role: AccessRole

    def allows(self, needed: AccessRole) -> bool:
        return self.role.allows(needed)


# With FAITHSCREEN_AUTH=off (loopback only) every request acts as this admin.
ANONYMOUS = Principal("anonymous", AccessRole.ADMIN)
